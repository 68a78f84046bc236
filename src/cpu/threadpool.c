/* The cpu backend's thread pool (threadpool.h): a shared pool per thread count, workers
 * waiting on one queue of tasks (a worker asked to help with a kernel), the caller and the
 * workers that come taking the kernel's chunks in turn, the caller watching for the last
 * ones before it sleeps (wait_parts); a cancellable run's chunks go in smaller chunks with
 * a look at the cancellation between them.
 * Where the process has an OpenMP runtime loaded (oneDNN's), the parts run on the calling
 * thread's OpenMP team instead (see run_on_team). */
#define _GNU_SOURCE /* RTLD_DEFAULT, sched_getcpu, pthread_setaffinity_np */
#include "cpu/threadpool.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h> /* _mm_pause */
#endif

enum { PART_MIN_COST = 256 * 1024, MAX_PARTS = 256 };

/* The split of a kernel's parts into chunks that the threads take in turn, so that the
 * caller works on while a worker wakes (cpu_pool_chunks_split): CHUNKS_PER_PART chunks per
 * thread, each at least CHUNK_MIN_COST byte-equivalents. */
#define CHUNKS_PER_PART 4
#define CHUNK_MIN_COST  (256.0 * 1024)

/* The caller's watch for its workers' parts (wait_parts), in microseconds. */
#define SPIN_MIN_US 5.0
#define SPIN_MAX_US 100.0

/* A chunk of a cancellable kernel: 32 Mi byte-equivalents, a few milliseconds on one
 * core, so a cancelled kernel stops within about that; calling the kernel once more per
 * chunk costs well under a microsecond, nothing beside it. */
#define CHUNK_COST (32.0 * 1024 * 1024)

typedef struct job {
    cpu_kernel_fn fn;
    void *const *out;
    const void *const *in;
    /* Parts not finished: decremented without the pool's mutex (the caller may watch it
     * spinning, wait_parts), the last one then broadcasts |done| under the mutex. */
    atomic_llong pending;
    /* Cancellation (NULL: none): the kernel's cost per iteration sizes the chunks, and
     * |stopped| tells the other parts that one saw the cancellation. */
    exec_cancel *cancel;
    double cost_per_iteration;
    atomic_int stopped;
    /* The split: [0, range) in |chunks| chunks, chunk i = [range * i / chunks, range * (i
     * + 1) / chunks), taken in turn through |next| by the caller and the workers. */
    int64_t range, chunks;
    atomic_llong next;
} job;

/* A worker asked to help with |job| (it then takes the job's chunks in turn). */
typedef struct task {
    job *job;
    struct task *next;
} task;

struct cpu_pool {
    int threads;
    int refs; /* under registry_mutex */
    pthread_mutex_t mu;
    pthread_cond_t work; /* a task was queued, or stop */
    pthread_cond_t done; /* a job's last part finished */
    task *head, *tail;
    pthread_t *workers;
    int started;
    bool stop;
    atomic_int running; /* runs of executables in progress */
    bool team;          /* parts on OpenMP's team (run_on_team), not on |workers| */
    cpu_pool *next;     /* in the registry */
    /* CXLA_CPU_POOL_AWAY=1 when the pool was created: the workers are kept off the
     * caller's CPU (away_from_caller), that CPU in |away_cpu| (-1: none yet); under |mu|. */
    bool away;
    int away_cpu;
};

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static cpu_pool *registry;

int cpu_pool_threads(int requested) {
    if (requested > 0) return requested;
    const char *env = getenv("CXLA_NUM_THREADS");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == '\0' && v > 0 && v <= 4096) return (int)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n <= 4096 ? (int)n : 1;
}

int64_t cpu_pool_parts(double cost, int64_t range, int threads) {
    if (threads <= 1 || range <= 1 || cost < 2.0 * PART_MIN_COST) return 1;
    double by_cost = cost / PART_MIN_COST;
    int64_t parts = threads;
    if (by_cost < (double)parts) parts = (int64_t)by_cost;
    if (parts > range) parts = range;
    if (parts > MAX_PARTS) parts = MAX_PARTS;
    return parts < 1 ? 1 : parts;
}

int64_t cpu_pool_chunks_split(double cost, int64_t range, int64_t parts) {
    if (parts <= 1) return 1;
    double by_cost = cost / CHUNK_MIN_COST;
    int64_t chunks = parts * CHUNKS_PER_PART;
    if (by_cost < (double)chunks) chunks = (int64_t)by_cost;
    if (chunks > range) chunks = range;
    return chunks < parts ? parts : chunks;
}

int64_t cpu_pool_chunks(double cost, int64_t range) {
    if (range <= 1 || !(cost > CHUNK_COST)) return 1;
    double by_cost = cost / CHUNK_COST;
    if (by_cost >= (double)range) return range;
    return (int64_t)by_cost + 1;
}

/* Runs iterations [begin, end) of |j|: at once without a cancellation, else in chunks,
 * stopping at the first chunk boundary where the run is cancelled. Only the calling
 * thread (|caller|) runs the poll hook (exec.h: the thread that called execute). */
static void run_part(job *j, int64_t begin, int64_t end, bool caller, bool poll_first) {
    if (!j->cancel) {
        j->fn(j->out, j->in, begin, end);
        return;
    }
    int64_t n = end - begin;
    int64_t chunks = cpu_pool_chunks(j->cost_per_iteration * (double)n, n);
    /* Chunk c is [begin + c * step + min(c, extra), ...): no product that can overflow. */
    int64_t step = n / chunks, extra = n % chunks;
    for (int64_t c = 0; c < chunks; c++) {
        if (atomic_load_explicit(&j->stopped, memory_order_relaxed)) return;
        /* The caller checked (and polled) just before the kernel (|poll_first| false:
         * its first chunk); a worker may start its part later. */
        bool stop = caller ? (c > 0 || poll_first) && exec_cancel_poll(j->cancel)
                           : exec_cancelled(j->cancel);
        if (stop) {
            atomic_store_explicit(&j->stopped, 1, memory_order_relaxed);
            return;
        }
        int64_t lo = begin + c * step + (c < extra ? c : extra);
        int64_t hi = lo + step + (c < extra ? 1 : 0);
        j->fn(j->out, j->in, lo, hi);
    }
}

/* Runs chunks of |j| until none is left (or the run is cancelled); the caller polls
 * before each chunk but its first. Returns how many it ran. */
static int64_t run_chunks(job *j, bool caller) {
    for (int64_t ran = 0;; ran++) {
        int64_t i = (int64_t)atomic_fetch_add(&j->next, 1);
        if (i >= j->chunks || atomic_load_explicit(&j->stopped, memory_order_relaxed)) return ran;
        run_part(j, j->range * i / j->chunks, j->range * (i + 1) / j->chunks, caller, ran > 0);
    }
}

/* A part of |j| is done. The caller may return (and |j| die) as soon as pending reaches 0,
 * so nothing of |j| is touched after the decrement. */
static void finish(cpu_pool *p, job *j) {
    if (atomic_fetch_sub(&j->pending, 1) != 1) return;
    /* The mutex taken and let go between the count's change and the broadcast: a caller
     * that saw the count above 0 under it is then already waiting. The broadcast comes
     * after the unlock, as cpu_pool_run_kernel's does: a woken caller then finds the
     * mutex free instead of sleeping on it until this thread lets it go. */
    pthread_mutex_lock(&p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_cond_broadcast(&p->done);
}

static void *worker_main(void *arg) {
    cpu_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        task *t = p->head;
        p->head = t->next;
        if (!p->head) p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        job *j = t->job; /* |t| lives in the caller's frame, gone once |j| is done */
        run_chunks(j, false);
        finish(p, j);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static bool use_team(void);

cxla_status cpu_pool_acquire(int threads, cpu_pool **out) {
    *out = NULL;
    if (threads < 1) threads = 1;
    pthread_mutex_lock(&registry_mutex);
    for (cpu_pool *p = registry; p; p = p->next)
        if (p->threads == threads) {
            p->refs++;
            *out = p;
            pthread_mutex_unlock(&registry_mutex);
            return NULL;
        }
    cpu_pool *p = calloc(1, sizeof(*p));
    if (p) p->workers = calloc((size_t)threads, sizeof(*p->workers));
    if (!p || !p->workers) {
        pthread_mutex_unlock(&registry_mutex);
        if (p) free(p);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory creating a thread pool");
    }
    p->threads = threads;
    p->refs = 1;
    p->away_cpu = -1;
    const char *away = getenv("CXLA_CPU_POOL_AWAY");
    p->away = away && strcmp(away, "1") == 0;
    p->team = use_team();
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->running, 0);
    p->next = registry;
    registry = p;
    pthread_mutex_unlock(&registry_mutex);
    *out = p;
    return NULL;
}

void cpu_pool_release(cpu_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&registry_mutex);
    bool last = --pool->refs == 0;
    if (last)
        for (cpu_pool **q = &registry; *q; q = &(*q)->next)
            if (*q == pool) {
                *q = pool->next;
                break;
            }
    pthread_mutex_unlock(&registry_mutex);
    if (!last) return;
    pthread_mutex_lock(&pool->mu);
    pool->stop = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->started; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->mu);
    free(pool->workers);
    free(pool);
}

bool cpu_pool_on_team(const cpu_pool *pool) {
    return pool && pool->team;
}

void cpu_pool_enter(cpu_pool *pool) {
    if (pool) atomic_fetch_add(&pool->running, 1);
}

void cpu_pool_leave(cpu_pool *pool) {
    if (pool) atomic_fetch_sub(&pool->running, 1);
}

int cpu_pool_share(cpu_pool *pool) {
    if (!pool) return 1;
    int running = atomic_load(&pool->running);
    int share = pool->threads / (running > 1 ? running : 1);
    return share > 0 ? share : 1;
}

/* ---- the parts on OpenMP's team ------------------------------------------------------------
 *
 * oneDNN (Debian's, built on OpenMP) runs its primitives on OpenMP's team of the calling
 * thread; after a parallel region its workers spin for a while before they sleep (unless
 * told to wait passively, as the cxla tool tells it: docs/performance.md, "The MLP step at
 * 2 threads"). The pool's own workers sleep on a condition at once, so a kernel
 * split right after a primitive wakes a second thread that then shares the other core with
 * the spinning OpenMP worker, and a kernel after a long run of single-thread steps wakes a
 * thread whose vCPU may have halted. On the shared 2-vCPU machine (under load) the MLP
 * step's 3 MB elementwise kernels took 46-90 us split over 2 threads against 34-36 us on
 * one (docs/performance.md, "The MLP step at 2 threads"). So where the process has an
 * OpenMP runtime (found by name, as onednn.c finds omp_set_num_threads, so that cxla does
 * not link one itself), a kernel's parts run on that same team: GOMP_parallel, the entry
 * point of GCC's `#pragma omp parallel` (LLVM's runtime has it too), one thread per part;
 * the threads take the parts in turn from a counter, so a team smaller than asked (a
 * nested region gets one thread) still runs them all, and a thread that arrives late
 * finds them taken.
 * It is opt-in (CXLA_CPU_POOL=openmp when a pool is created): measured on a quiet machine
 * it gained within the noise, and it depends on libgomp's entry point, so the pool's own
 * workers stay the default. */

typedef void (*gomp_parallel_fn)(void (*fn)(void *), void *data, unsigned threads, unsigned flags);
static gomp_parallel_fn gomp_parallel;
static pthread_once_t gomp_once = PTHREAD_ONCE_INIT;

static void gomp_init(void) {
    void *sym = dlsym(RTLD_DEFAULT, "GOMP_parallel");
    /* dlsym returns data pointers; POSIX guarantees the conversion. */
    if (sym) memcpy(&gomp_parallel, &sym, sizeof(sym));
}

typedef struct team_job {
    job *j;
    int64_t range, parts;
    atomic_llong next; /* the next part to take */
    pthread_t caller;
} team_job;

static void team_body(void *arg) {
    team_job *t = arg;
    bool caller = pthread_equal(pthread_self(), t->caller) != 0;
    for (;;) {
        int64_t i = (int64_t)atomic_fetch_add(&t->next, 1);
        if (i >= t->parts) break;
        run_part(t->j, t->range * i / t->parts, t->range * (i + 1) / t->parts, caller, false);
    }
}

/* Whether a pool created now runs its parts on OpenMP's team. */
static bool use_team(void) {
    const char *env = getenv("CXLA_CPU_POOL");
    if (!env || strcmp(env, "openmp") != 0) return false;
    pthread_once(&gomp_once, gomp_init);
    return gomp_parallel != NULL;
}

/* Runs |j|'s |parts| parts of [0, range) on the calling thread's OpenMP team. */
static void run_on_team(job *j, int64_t range, int64_t parts) {
    team_job t = {j, range, parts, 0, pthread_self()};
    atomic_init(&t.next, 0);
    gomp_parallel(team_body, &t, (unsigned)parts, 0);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

/* Waits until the workers finish the chunks of |j| they took. No chunk is left to take, so
 * each worker still at work is finishing one, about as long as one of the caller's: it ran
 * |ran| of them in |own_us|. So the caller first watches |pending| for up to two of its
 * chunks' time (within SPIN_MIN_US and SPIN_MAX_US), and only then sleeps on |done|.
 * Sleeping at once cost a second wake-up per split kernel, the caller's own (about 10 us
 * on the 2-vCPU machine: a 3 MB elementwise kernel took 33 us on 2 threads against 25 us
 * on one, docs/performance.md, "Narrow products and the pool's wake-ups"). The watch is
 * bounded by the work in flight, unlike an idle worker's spin. */
static void wait_parts(cpu_pool *pool, job *j, double own_us, int64_t ran) {
    if (atomic_load(&j->pending) == 0) return;
    double limit = 2 * own_us / (double)(ran > 0 ? ran : 1);
    limit = limit < SPIN_MIN_US ? SPIN_MIN_US : limit > SPIN_MAX_US ? SPIN_MAX_US : limit;
    double until = now_us() + limit;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(&j->pending, memory_order_acquire) == 0) return;
            cpu_relax();
        }
        if (now_us() > until) break;
    }
    pthread_mutex_lock(&pool->mu);
    while (atomic_load(&j->pending) > 0) pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

/* With CXLA_CPU_POOL_AWAY=1 (opt-in: its gain is not measured yet), keeps the workers off
 * the CPU the caller runs on (under p->mu). A woken thread is placed by the kernel's
 * scheduler, which in a VM avoids an idle vCPU whose host thread is not running (a halted
 * vCPU reads as preempted); on the 2-vCPU machine the worker then shared the caller's CPU:
 * in the MLP step's `dh2` (2 threads, 8 chunks) either the worker ran all 8 chunks and the
 * caller none, or the reverse, in every run, never both at once (docs/performance.md,
 * h-mlp5). So the workers may run wherever the process may but on the caller's CPU, set
 * again only when the caller's CPU changes (a system call then, none otherwise); with one
 * CPU allowed, nothing is set. */
static void away_from_caller(cpu_pool *p) {
#if defined(__linux__)
    if (!p->away) return;
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu == p->away_cpu || p->started == 0) return;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || !CPU_ISSET(cpu, &allowed)) return;
    CPU_CLR(cpu, &allowed);
    if (CPU_COUNT(&allowed) == 0) return;
    for (int i = 0; i < p->started; i++)
        pthread_setaffinity_np(p->workers[i], sizeof(allowed), &allowed);
    p->away_cpu = cpu;
#else
    (void)p;
#endif
}

/* Starts the workers once (under p->mu); false when none could start. */
static bool start_workers(cpu_pool *p) {
    while (p->started < p->threads - 1) {
        if (pthread_create(&p->workers[p->started], NULL, worker_main, p) != 0) break;
        p->started++;
    }
    return p->started > 0;
}

bool cpu_pool_run_kernel(cpu_pool *pool, cpu_kernel_fn fn, const cpu_kernel_info *info,
                         void *const *out, const void *const *in, exec_cancel *cancel) {
    int64_t range = info ? info->range : 1;
    int threads = pool ? cpu_pool_share(pool) : 1;
    int64_t parts = info ? cpu_pool_parts(info->cost, range, threads) : 1;
    job j = {fn, out, in, parts - 1, cancel, info && range > 0 ? info->cost / (double)range : 0.0,
             0,  0,   0,  0};
    if (parts <= 1) {
        run_part(&j, 0, range, true, false);
        return !atomic_load(&j.stopped);
    }
    if (pool->team) {
        run_on_team(&j, range, parts);
        return !atomic_load(&j.stopped);
    }
    task tasks[MAX_PARTS];
    pthread_mutex_lock(&pool->mu);
    if (!start_workers(pool)) {
        pthread_mutex_unlock(&pool->mu);
        run_part(&j, 0, range, true, false);
        return !atomic_load(&j.stopped);
    }
    away_from_caller(pool);
    /* One task per worker asked to help; each thread then takes chunks in turn. */
    j.range = range;
    j.chunks = cpu_pool_chunks_split(info->cost, range, parts);
    for (int64_t i = 1; i < parts; i++) {
        tasks[i] = (task){&j, NULL};
        if (pool->tail)
            pool->tail->next = &tasks[i];
        else
            pool->head = &tasks[i];
        pool->tail = &tasks[i];
    }
    /* The workers are woken after the unlock, not before it: a worker woken while the
     * caller still held the mutex found it taken, slept on it and was woken a second time
     * by the unlock (strace: a FUTEX_WAIT on the mutex right after the condition's wake),
     * two wake-ups per split kernel (docs/performance.md, h-mlp5). */
    pthread_mutex_unlock(&pool->mu);
    pthread_cond_broadcast(&pool->work);
    double started = now_us();
    int64_t ran = run_chunks(&j, true);
    /* Tasks of this job that no worker took yet: nothing left for them. */
    pthread_mutex_lock(&pool->mu);
    task *prev = NULL;
    for (task *t = pool->head; t;) {
        task *next = t->next;
        if (t->job == &j) {
            if (prev)
                prev->next = next;
            else
                pool->head = next;
            if (pool->tail == t) pool->tail = prev;
            atomic_fetch_sub(&j.pending, 1);
        } else {
            prev = t;
        }
        t = next;
    }
    pthread_mutex_unlock(&pool->mu);
    wait_parts(pool, &j, now_us() - started, ran);
    return !atomic_load(&j.stopped);
}
