/* The cpu backend's thread pool: worker threads that run the parts of large kernels.
 *
 * A pool of N threads is N - 1 workers plus the calling thread. Pools are shared: every
 * executable compiled with the same thread count holds the same pool (cpu_pool_acquire
 * counts references), so that the replicas of a run on threads and several executables
 * share the cores instead of each bringing its own workers.
 *
 * Cost model (docs/performance.md): a kernel's work is counted in byte-equivalents (the
 * bytes it reads and writes, plus a weight per transcendental function per element;
 * cpu_kernel_info.cost). Waking a worker and waiting for it costs a few microseconds, the
 * time to stream about 64 KiB; a part below PART_MIN_COST (256 Ki byte-equivalents, ~10 us
 * at memory speed) does not pay for that, so a kernel is split into at most cost /
 * PART_MIN_COST parts, at most one per thread, at most its range; a kernel below
 * 2 * PART_MIN_COST stays on the calling thread. The split kernel's range is cut into
 * about 4 chunks per thread (contiguous ranges of its outer loop, ggml's ith/nth, each of at
 * least PART_MIN_COST), which the calling thread and the workers take in turn: the
 * caller starts at once and works on while a sleeping worker wakes (about 10 us on the
 * 2-vCPU machine), the worker takes what is left when it comes. The caller then watches
 * for the chunks still running, for about as long as its own work took, before it sleeps
 * (a second wake-up otherwise); no thread spins idle. The results do not depend on the
 * split (emit.h).
 *
 * Oversubscription: each run of an executable registers itself (cpu_pool_enter/leave);
 * a kernel uses at most N / (runs in progress) threads, so R replicas running at once on
 * their own threads share the N cores. Chunks that no worker has taken yet are run by the
 * caller itself, so a call never waits on busy workers for work it could do.
 *
 * With CXLA_CPU_POOL=openmp in the environment when a pool is created, and an OpenMP
 * runtime loaded (oneDNN's, found by name at run time), the parts run on the calling
 * thread's OpenMP team instead of the pool's workers (an experiment, off by default): the threads
 * oneDNN's primitives run on, still spinning after a primitive when the next kernel comes,
 * where a sleeping worker takes tens of microseconds to wake (threadpool.c says more).
 */
#ifndef CXLA_CPU_THREADPOOL_H_
#define CXLA_CPU_THREADPOOL_H_

#include <stdint.h>

#include "base/base.h"
#include "cpu/cpu.h"
#include "cpu/emit.h"
#include "exec/exec.h"

typedef struct cpu_pool cpu_pool;

/* The thread count a pool gets for |requested| (exec_compile_options.thread_count): a
 * positive value as it is; 0 takes CXLA_NUM_THREADS when set to a positive number, else
 * the number of online cores. */
int cpu_pool_threads(int requested);

/* The shared pool of |threads| threads (>= 1; 1 is no workers); workers start on first
 * use. NULL with an error when memory is short. Release with cpu_pool_release. */
cxla_status cpu_pool_acquire(int threads, cpu_pool **out);
void cpu_pool_release(cpu_pool *pool);

/* Whether |pool| runs the parts of kernels on OpenMP's team (see above; NULL: false). */
bool cpu_pool_on_team(const cpu_pool *pool);

/* A run of an executable begins / ends (see above). NULL pools are ignored. */
void cpu_pool_enter(cpu_pool *pool);
void cpu_pool_leave(cpu_pool *pool);

/* The threads a kernel or library call may use now: the pool's count divided among the
 * runs in progress (at least 1). */
int cpu_pool_share(cpu_pool *pool);

/* Runs |fn| on |out|, |in| over [0, info->range), split by the cost model; returns when
 * every part is done. |pool| NULL runs it on the calling thread.
 *
 * Cancellation (exec.h's contract for long kernels): with a |cancel|, each part runs as
 * chunks of about CHUNK_COST byte-equivalents (a few milliseconds of work) and checks
 * exec_cancelled between them; the calling thread, which alone may run the poll hook,
 * calls exec_cancel_poll there. A kernel whose range cannot be split (range 1) is one
 * chunk. Returns false when it stopped early for a cancellation: its outputs are then
 * partly written, and the caller reports exec_cancel_error. NULL |cancel|: never. */
bool cpu_pool_run_kernel(cpu_pool *pool, cpu_kernel_fn fn, const cpu_kernel_info *info,
                         void *const *out, const void *const *in, exec_cancel *cancel);

/* How many chunks a part of |cost| byte-equivalents over |range| iterations is run as
 * when the run can be cancelled (for tests and docs). */
int64_t cpu_pool_chunks(double cost, int64_t range);

/* How many chunks the |parts| threads of a split kernel of |cost| byte-equivalents over
 * |range| iterations take in turn (for tests and docs). */
int64_t cpu_pool_chunks_split(double cost, int64_t range, int64_t parts);

/* How many parts the cost model gives a kernel of |cost| byte-equivalents over |range|
 * iterations on |threads| threads (for tests and docs). */
int64_t cpu_pool_parts(double cost, int64_t range, int threads);

#endif /* CXLA_CPU_THREADPOOL_H_ */
