/* bench_floors: the floors of this machine that the cpu backend is measured against.
 *
 *   bench_floors [--mb N] [--threads LIST] [--reps N] [--what all|mem|fma]
 *
 * Memory: a STREAM-like copy (c = a) and triad (a = b + s * c) over double arrays of
 * --mb MiB each (default 256, far bigger than any cache these machines have), each thread
 * on its own contiguous share, first touched by that thread. Bytes are counted as STREAM
 * counts them: what the loop reads plus what it writes (16 bytes per element for copy, 24
 * for triad; the write-allocate reads are not counted), so a workload's floor is the
 * bytes it must read and write divided by the triad figure. Best of --reps runs.
 *
 * Read: a read-only stream (the sum of a fourth array as f32, with READ_ACCUMULATORS
 * vector accumulators of the widest width, the loads unrolled so that the adds never
 * wait), 8 bytes per double element read. A stream that writes nothing runs faster than
 * the triad (no write-allocate traffic, no write-back), so this is the floor of a pure
 * reduction (a sum to a scalar or to one value per row: its few results are nothing beside
 * what it reads). Its array is advised to use transparent huge pages, as NumPy advises its
 * arrays of 4 MiB and more (so the inputs of NumPy and PyTorch in ops_bench.py have
 * them): on the 2-core EPYC a read stream over 4 KiB pages ran about 8% slower.
 *
 * Compute: the f32 FMA peak, a loop of fused multiply-adds on enough independent
 * accumulators to cover the FMA latency on every port (16 vectors of the widest width the
 * compiler was told about: AVX-512, else AVX2 with FMA, else scalar), in registers, no
 * memory traffic. Built with -O2 -march=native (CMakeLists.txt) so that it uses what this
 * CPU has.
 *
 * Every figure is measured once per thread count of --threads (default 1,2) and printed
 * as one machine-readable line, `NAME VALUE` (the best of --reps): triad_GBps_<n>t,
 * copy_GBps_<n>t, read_GBps_<n>t, fma_GFLOPs_<n>t. Lines starting with '#' are notes for
 * people (sizes, vector width) and, for each memory figure, the spread of its repetitions
 * (`# spread copy_GBps_2t best 69.1 median 66.0 worst 41.2`): on the shared 2-core EPYC the
 * copy figure moved from 41 to 69 GB/s between two runs five minutes apart, so one
 * figure alone says little; bench/ops_bench.py runs --what mem again between its cases.
 * --what mem measures only memory, fma only the FMA peak. Exit status 2 on bad arguments
 * or when memory cannot be had. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* One vector of f32 lanes of the widest kind the compiler targets, and the three
 * operations the FMA loop needs on it. */
#if defined(__AVX512F__)
#include <immintrin.h>
#define FMA_LANES 16
#define FMA_ISA   "avx512"
typedef __m512 vec;
static inline vec vec_set(float x) {
    return _mm512_set1_ps(x);
}
static inline vec vec_fma(vec x, vec m, vec c) {
    return _mm512_fmadd_ps(x, m, c);
}
static inline double vec_sum(vec x) {
    return (double)_mm512_reduce_add_ps(x);
}
static inline vec vec_load(const float *p) {
    return _mm512_loadu_ps(p);
}
static inline vec vec_add(vec x, vec y) {
    return _mm512_add_ps(x, y);
}
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define FMA_LANES 8
#define FMA_ISA   "avx2+fma"
typedef __m256 vec;
static inline vec vec_set(float x) {
    return _mm256_set1_ps(x);
}
static inline vec vec_fma(vec x, vec m, vec c) {
    return _mm256_fmadd_ps(x, m, c);
}
static inline double vec_sum(vec x) {
    float lanes[8];
    _mm256_storeu_ps(lanes, x);
    double s = 0;
    for (int l = 0; l < 8; l++) s += lanes[l];
    return s;
}
static inline vec vec_load(const float *p) {
    return _mm256_loadu_ps(p);
}
static inline vec vec_add(vec x, vec y) {
    return _mm256_add_ps(x, y);
}
#else
#include <math.h>
#define FMA_LANES 1
#define FMA_ISA   "scalar"
typedef float vec;
static inline vec vec_set(float x) {
    return x;
}
static inline vec vec_fma(vec x, vec m, vec c) {
    return fmaf(x, m, c);
}
static inline double vec_sum(vec x) {
    return (double)x;
}
static inline vec vec_load(const float *p) {
    return *p;
}
static inline vec vec_add(vec x, vec y) {
    return x + y;
}
#endif

enum { MAX_THREADS = 256, FMA_ACCUMULATORS = 16, READ_ACCUMULATORS = 8 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- memory ------------------------------------------------------------------------- */

typedef enum { KERNEL_INIT, KERNEL_COPY, KERNEL_TRIAD, KERNEL_READ, KERNEL_FMA } kernel;

typedef struct {
    kernel k;
    double *a, *b, *c;  /* this thread's share of the arrays */
    size_t n;           /* elements in the share */
    int64_t iterations; /* FMA loop trips */
    double checksum;    /* keeps the compiler from dropping the work */
} job;

static void run_init(job *j) {
    for (size_t i = 0; i < j->n; i++) {
        j->a[i] = 1.0;
        j->b[i] = 2.0;
        j->c[i] = 0.5;
    }
}

static void run_copy(job *j) {
    double *restrict c = j->c;
    const double *restrict a = j->a;
    for (size_t i = 0; i < j->n; i++) c[i] = a[i];
    j->checksum += c[j->n / 2];
}

static void run_triad(job *j) {
    double *restrict a = j->a;
    const double *restrict b = j->b, *restrict c = j->c;
    const double s = 3.0;
    for (size_t i = 0; i < j->n; i++) a[i] = b[i] + s * c[i];
    j->checksum += a[j->n / 2];
}

/* The share of a, read as 2n floats: eight named accumulators (as run_fma says, an array
 * would live in memory), each fed by its own load, so the loop is bound by the loads. */
static void run_read(job *j) {
    const float *restrict x = (const float *)j->a;
    size_t n = 2 * j->n, step = (size_t)FMA_LANES * READ_ACCUMULATORS, i = 0;
    vec s0 = vec_set(0), s1 = vec_set(0), s2 = vec_set(0), s3 = vec_set(0);
    vec s4 = vec_set(0), s5 = vec_set(0), s6 = vec_set(0), s7 = vec_set(0);
    for (; i + step <= n; i += step) {
        s0 = vec_add(s0, vec_load(x + i + 0 * FMA_LANES));
        s1 = vec_add(s1, vec_load(x + i + 1 * FMA_LANES));
        s2 = vec_add(s2, vec_load(x + i + 2 * FMA_LANES));
        s3 = vec_add(s3, vec_load(x + i + 3 * FMA_LANES));
        s4 = vec_add(s4, vec_load(x + i + 4 * FMA_LANES));
        s5 = vec_add(s5, vec_load(x + i + 5 * FMA_LANES));
        s6 = vec_add(s6, vec_load(x + i + 6 * FMA_LANES));
        s7 = vec_add(s7, vec_load(x + i + 7 * FMA_LANES));
    }
    double rest = 0;
    for (; i < n; i++) rest += x[i];
    j->checksum += vec_sum(s0) + vec_sum(s1) + vec_sum(s2) + vec_sum(s3) + vec_sum(s4) +
                   vec_sum(s5) + vec_sum(s6) + vec_sum(s7) + rest;
}

/* ---- compute ------------------------------------------------------------------------ */

/* Each trip does FMA_ACCUMULATORS independent vector FMAs (x = x * m + c), so the only
 * dependency is on the same accumulator one trip later: 16 chains hide a 4-cycle
 * latency on two FMA ports. m < 1 and c small keep the values finite forever. */
static void run_fma(job *j) {
    /* Sixteen named accumulators rather than an array: an array is kept in memory unless
     * the compiler unrolls the inner loop, and then store-to-load latency is measured. */
    const vec m = vec_set(0.999999f), c = vec_set(1e-7f);
    vec x0 = vec_set(0), x1 = vec_set(1), x2 = vec_set(2), x3 = vec_set(3);
    vec x4 = vec_set(4), x5 = vec_set(5), x6 = vec_set(6), x7 = vec_set(7);
    vec x8 = vec_set(8), x9 = vec_set(9), x10 = vec_set(10), x11 = vec_set(11);
    vec x12 = vec_set(12), x13 = vec_set(13), x14 = vec_set(14), x15 = vec_set(15);
    for (int64_t it = 0; it < j->iterations; it++) {
        x0 = vec_fma(x0, m, c), x1 = vec_fma(x1, m, c), x2 = vec_fma(x2, m, c);
        x3 = vec_fma(x3, m, c), x4 = vec_fma(x4, m, c), x5 = vec_fma(x5, m, c);
        x6 = vec_fma(x6, m, c), x7 = vec_fma(x7, m, c), x8 = vec_fma(x8, m, c);
        x9 = vec_fma(x9, m, c), x10 = vec_fma(x10, m, c), x11 = vec_fma(x11, m, c);
        x12 = vec_fma(x12, m, c), x13 = vec_fma(x13, m, c), x14 = vec_fma(x14, m, c);
        x15 = vec_fma(x15, m, c);
    }
    j->checksum = vec_sum(x0) + vec_sum(x1) + vec_sum(x2) + vec_sum(x3) + vec_sum(x4) +
                  vec_sum(x5) + vec_sum(x6) + vec_sum(x7) + vec_sum(x8) + vec_sum(x9) +
                  vec_sum(x10) + vec_sum(x11) + vec_sum(x12) + vec_sum(x13) + vec_sum(x14) +
                  vec_sum(x15);
}

static void *thread_main(void *arg) {
    job *j = arg;
    switch (j->k) {
    case KERNEL_INIT: run_init(j); break;
    case KERNEL_COPY: run_copy(j); break;
    case KERNEL_TRIAD: run_triad(j); break;
    case KERNEL_READ: run_read(j); break;
    case KERNEL_FMA: run_fma(j); break;
    }
    return NULL;
}

/* Runs |jobs[0..n)| on n threads (the first on the calling thread) and returns the wall
 * time from the start of the first to the end of the last; -1 when a thread cannot start. */
static double run_jobs(job *jobs, int n) {
    pthread_t threads[MAX_THREADS];
    double t0 = now();
    int started = 1;
    for (; started < n; started++)
        if (pthread_create(&threads[started], NULL, thread_main, &jobs[started]) != 0) break;
    thread_main(&jobs[0]);
    for (int i = 1; i < started; i++) pthread_join(threads[i], NULL);
    double t = now() - t0;
    return started == n ? t : -1;
}

/* Splits |total| elements of a, b, c over |n| jobs of kernel |k|. */
static void split(job *jobs, int n, kernel k, double *a, double *b, double *c, size_t total) {
    size_t per = total / (size_t)n;
    for (int i = 0; i < n; i++) {
        size_t lo = per * (size_t)i, hi = i == n - 1 ? total : lo + per;
        jobs[i] = (job){.k = k, .a = a + lo, .b = b + lo, .c = c + lo, .n = hi - lo};
    }
}

static double checksum_all(const job *jobs, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += jobs[i].checksum;
    return s;
}

/* ---- main --------------------------------------------------------------------------- */

static int usage(const char *why) {
    fprintf(stderr,
            "bench_floors: %s\nusage: bench_floors [--mb N] [--threads LIST] [--reps N] "
            "[--what all|mem|fma]\n"
            "  --mb N          MiB per array (4 arrays; default 256, far over a 32 MiB\n"
            "                  last-level cache)\n"
            "  --threads LIST  thread counts, comma-separated (default 1,2)\n"
            "  --reps N        runs per figure, best kept (default 8)\n"
            "  --what W        all (default), mem (copy, triad, read) or fma\n",
            why);
    return 2;
}

/* |bytes| of memory advised to use transparent huge pages (2 MiB aligned, so that whole
 * huge pages fit), or NULL; |*base| and |*size| are what to munmap. Where the advice is
 * not available the pages are the usual ones. */
static double *alloc_huge(size_t bytes, void **base, size_t *size) {
    const size_t huge = (size_t)2 << 20;
    *size = bytes + huge;
    *base = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (*base == MAP_FAILED) return NULL;
    char *p = (char *)(((uintptr_t)*base + huge - 1) & ~(uintptr_t)(huge - 1));
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return (double *)(void *)p;
}

/* Prints the spread of one memory figure over its repetitions: |seconds[0..n)| for
 * |bytes| each, sorted here. */
static void print_spread(const char *name, int threads, double bytes, double *seconds, long n) {
    for (long i = 1; i < n; i++)
        for (long j = i; j > 0 && seconds[j] < seconds[j - 1]; j--) {
            double t = seconds[j];
            seconds[j] = seconds[j - 1];
            seconds[j - 1] = t;
        }
    double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
    printf("# spread %s_GBps_%dt best %.2f median %.2f worst %.2f over %ld runs\n", name, threads,
           bytes / seconds[0] / 1e9, bytes / median / 1e9, bytes / seconds[n - 1] / 1e9, n);
}

static int parse_positive(const char *text, long max, long *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > max) return 0;
    *out = v;
    return 1;
}

/* The memory figures (copy, triad, read) at each thread count of |counts|, with their
 * spreads; 0, or -1 with a message on stderr. */
static int measure_memory(long mb, long reps, const int *counts, int ncounts, job *jobs,
                          double *sink) {
    size_t n = (size_t)mb * 1024 * 1024 / sizeof(double);
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    double *c = malloc(n * sizeof(double));
    void *r_base = NULL;
    size_t r_size = 0;
    double *rd = alloc_huge(n * sizeof(double), &r_base, &r_size);
    if (!a || !b || !c || !rd) {
        fprintf(stderr, "bench_floors: cannot allocate 4 arrays of %ld MiB (try --mb)\n", mb);
        free(a);
        free(b);
        free(c);
        if (rd) munmap(r_base, r_size);
        return -1;
    }
    int most = 1;
    for (int i = 0; i < ncounts; i++) most = counts[i] > most ? counts[i] : most;
    /* First touch by as many threads as will run later, so pages spread the same way. */
    split(jobs, most, KERNEL_INIT, a, b, c, n);
    double started = run_jobs(jobs, most);
    split(jobs, most, KERNEL_INIT, rd, b, c, n);
    int status = 0;
    if (started < 0 || run_jobs(jobs, most) < 0) {
        fprintf(stderr, "bench_floors: cannot start %d threads\n", most);
        status = -1;
    }
    printf("# memory: 3 arrays of %ld MiB (double), best of %ld; STREAM byte counting; read: "
           "a fourth, huge pages advised\n",
           mb, reps);
    for (int ci = 0; ci < ncounts && !status; ci++) {
        int t = counts[ci];
        double best_copy = 1e30, best_triad = 1e30, best_read = 1e30;
        double *times = malloc((size_t)reps * 3 * sizeof(double));
        if (!times) {
            fprintf(stderr, "bench_floors: out of memory\n");
            status = -1;
            break;
        }
        for (long r = 0; r < reps && !status; r++) {
            split(jobs, t, KERNEL_COPY, a, b, c, n);
            double tc = run_jobs(jobs, t);
            *sink += checksum_all(jobs, t);
            split(jobs, t, KERNEL_TRIAD, a, b, c, n);
            double tt = run_jobs(jobs, t);
            *sink += checksum_all(jobs, t);
            split(jobs, t, KERNEL_READ, rd, b, c, n);
            double tr = run_jobs(jobs, t);
            *sink += checksum_all(jobs, t);
            if (tc < 0 || tt < 0 || tr < 0) {
                fprintf(stderr, "bench_floors: cannot start %d threads\n", t);
                status = -1;
            }
            times[r] = tc;
            times[reps + r] = tt;
            times[2 * reps + r] = tr;
            best_copy = tc < best_copy ? tc : best_copy;
            best_triad = tt < best_triad ? tt : best_triad;
            best_read = tr < best_read ? tr : best_read;
        }
        if (status) {
            free(times);
            break;
        }
        printf("copy_GBps_%dt %.2f\n", t, 16.0 * (double)n / best_copy / 1e9);
        printf("triad_GBps_%dt %.2f\n", t, 24.0 * (double)n / best_triad / 1e9);
        printf("read_GBps_%dt %.2f\n", t, 8.0 * (double)n / best_read / 1e9);
        print_spread("copy", t, 16.0 * (double)n, times, reps);
        print_spread("triad", t, 24.0 * (double)n, times + reps, reps);
        print_spread("read", t, 8.0 * (double)n, times + 2 * reps, reps);
        free(times);
        fflush(stdout);
    }
    free(a);
    free(b);
    free(c);
    munmap(r_base, r_size);
    return status;
}

int main(int argc, char **argv) {
    long mb = 256, reps = 8;
    bool mem = true, fma = true;
    int counts[16], ncounts = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) return usage("an option needs a value");
        const char *v = argv[++i];
        if (strcmp(a, "--mb") == 0) {
            if (!parse_positive(v, 1 << 20, &mb)) return usage("--mb needs a positive number");
        } else if (strcmp(a, "--reps") == 0) {
            if (!parse_positive(v, 1000, &reps)) return usage("--reps needs 1 to 1000");
        } else if (strcmp(a, "--what") == 0) {
            if (strcmp(v, "all") != 0 && strcmp(v, "mem") != 0 && strcmp(v, "fma") != 0)
                return usage("--what needs all, mem or fma");
            mem = strcmp(v, "fma") != 0;
            fma = strcmp(v, "mem") != 0;
        } else if (strcmp(a, "--threads") == 0) {
            char *list = strdup(v), *save = NULL;
            if (!list) return usage("out of memory");
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                long n;
                if (ncounts == 16 || !parse_positive(t, MAX_THREADS, &n)) {
                    free(list);
                    return usage("--threads needs up to 16 counts of 1 to 256, e.g. 1,2");
                }
                counts[ncounts++] = (int)n;
            }
            free(list);
        } else {
            return usage("unknown option");
        }
    }
    if (ncounts == 0) {
        counts[0] = 1;
        counts[1] = 2;
        ncounts = 2;
    }

    job jobs[MAX_THREADS];
    double sink = 0;
    if (mem && measure_memory(mb, reps, counts, ncounts, jobs, &sink) != 0) return 2;

    if (!fma) {
        printf("# checksum %g\n", sink);
        return 0;
    }
    printf("# compute: f32 FMA, %s, %d lanes x %d accumulators\n", FMA_ISA, FMA_LANES,
           FMA_ACCUMULATORS);
    /* Iterations sized from a short calibration run so that each figure takes ~0.1 s. */
    job probe = {.k = KERNEL_FMA, .iterations = 1 << 16};
    double tp = run_jobs(&probe, 1);
    int64_t iterations = (int64_t)((double)probe.iterations * 0.1 / (tp > 1e-6 ? tp : 1e-6));
    if (iterations < 1000) iterations = 1000;
    double flops_per_thread = 2.0 * FMA_LANES * FMA_ACCUMULATORS * (double)iterations;
    for (int ci = 0; ci < ncounts; ci++) {
        int t = counts[ci];
        double best = 1e30;
        for (long r = 0; r < (reps < 5 ? reps : 5); r++) {
            for (int i = 0; i < t; i++) jobs[i] = (job){.k = KERNEL_FMA, .iterations = iterations};
            double tf = run_jobs(jobs, t);
            if (tf < 0) {
                fprintf(stderr, "bench_floors: cannot start %d threads\n", t);
                return 2;
            }
            sink += checksum_all(jobs, t);
            best = tf < best ? tf : best;
        }
        printf("fma_GFLOPs_%dt %.1f\n", t, flops_per_thread * t / best / 1e9);
        fflush(stdout);
    }
    printf("# checksum %g\n", sink);
    return 0;
}
