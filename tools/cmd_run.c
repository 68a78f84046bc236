/* cxla run: parse a module, take or generate inputs, run it through the runtime API
 * (cxla/runtime.h), print or save the result and what the module outfed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/memcount.h"
#include "exec/devices.h"
#include "interp/interp_memory.h"
#include "literal/literal_internal.h"
#include "fake_args.h"
#include "progress.h"
#include "tool.h"

/* ---- ending a run: SIGINT and --timeout ------------------------------------------- */

/* The cancellation of this command's runs (cxla/runtime.h): requested by the first
 * SIGINT (the handler then goes back to the default, so a second one ends cxla at once)
 * and by the --timeout watchdog. The run stops at its next instruction and fails naming
 * it. */
static cxla_cancel *run_cancel;

static void on_sigint(int sig) {
    (void)sig;
    cxla_cancel_request(run_cancel, CXLA_STATUS_CANCELLED,
                        "interrupted (SIGINT; a second one ends cxla at once)");
}

static void catch_sigint(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sa.sa_flags = (int)SA_RESETHAND; /* the second SIGINT kills */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

typedef struct watchdog {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, started;
    double seconds;
    pthread_t thread;
} watchdog;

static char timeout_reason[128];

static void *watch(void *arg) {
    watchdog *w = arg;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    double whole = (double)(int64_t)w->seconds;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)((w->seconds - whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&w->cv, &w->mu, &t);
    bool fire = !w->done;
    pthread_mutex_unlock(&w->mu);
    if (fire) cxla_cancel_request(run_cancel, CXLA_STATUS_DEADLINE_EXCEEDED, timeout_reason);
    return NULL;
}

/* Starts the watchdog of --timeout |seconds| (0: none). */
static void watchdog_start(watchdog *w, double seconds) {
    memset(w, 0, sizeof(*w));
    if (!(seconds > 0) || !run_cancel) return;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->seconds = seconds;
    snprintf(timeout_reason, sizeof(timeout_reason), "it ran longer than --timeout %g s", seconds);
    w->started = pthread_create(&w->thread, NULL, watch, w) == 0;
}

static void watchdog_stop(watchdog *w) {
    if (!w->started) return;
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

/* Seconds before a single run shows its progress line: 1, or CXLA_PROGRESS_AFTER (the
 * tests set 0 to see the line without a slow module). */
static double ticker_delay(void) {
    const char *e = getenv("CXLA_PROGRESS_AFTER");
    char *end = NULL;
    double v = e ? strtod(e, &end) : 1.0;
    return e && end != e && v >= 0 ? v : 1.0;
}

/* ---- generated inputs: fake_args.c ---------------------------------------------------- */

static cxla_status make_random(const cxla_shape *shape, uint64_t *state, cxla_literal **out) {
    return fake_args_make(shape, NULL, state, out);
}

/* The constraint of entry parameter |p|, or NULL. */
static const fake_constraint *constraint_of(const fake_constraint *all, int64_t count, int64_t p) {
    return all && p < count ? &all[p] : NULL;
}

/* ---- inputs from the command line ----------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* An INPUT: a .npy file, or literal text; a directory is neither, and says so (not as
 * a literal that fails to parse). */
static cxla_status read_value(const char *in, cxla_type type, cxla_literal **out) {
    struct stat st;
    if (stat(in, &st) == 0 && S_ISDIR(st.st_mode))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "'%s' is a directory, where a file was expected (%s)", in,
                          strerror(EISDIR));
    if (ends_with(in, ".npy")) return cxla_npy_read_file(in, type, out);
    return cxla_literal_parse(in, (size_t)-1, NULL, out);
}

/* Builds the argument for parameter shape |s| from inputs[*next ...]. */
static cxla_status build_arg(const cxla_shape *s, char **inputs, int64_t *next,
                             cxla_literal **out) {
    if (s->type == CXLA_TUPLE) {
        int64_t n = s->tuple_count;
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        cxla_status st = NULL;
        for (int64_t i = 0; i < n && !st; i++)
            st = build_arg(&s->elements[i], inputs, next, &elements[i]);
        if (!st) st = cxla_literal_create_tuple(elements, n, out);
        if (st)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return st;
    }
    const char *in = inputs[(*next)++];
    int64_t index = *next - 1;
    cxla_literal *lit = NULL;
    cxla_status st;
    st = read_value(in, s->type, &lit);
    if (st) return cxla_status_annotate(st, "input %" PRId64, index);
    /* A dynamic parameter takes any size up to its bounds (the interpreter checks). */
    if (cxla_shape_is_static(s) && !cxla_shape_compatible(cxla_literal_shape(lit), s)) {
        char *want = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
        char *got = cxla_shape_to_string(cxla_literal_shape(lit), CXLA_SHAPE_PRINT_NO_LAYOUT);
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "input %" PRId64 " ('%s') has shape %s, but the parameter needs %s", index,
                        in, got ? got : "?", want ? want : "?");
        free(want);
        free(got);
        cxla_literal_free(lit);
        return st;
    }
    *out = lit;
    return NULL;
}

/* "the module takes 2 inputs, got 1", then one line per parameter with its shape. */
static cxla_status input_count_error(cxla_executable *exe, int64_t given) {
    int64_t leaves = cxla_executable_parameter_leaf_count(exe);
    int64_t nparams = cxla_executable_parameter_count(exe);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b,
                       "the module takes %" PRId64 " input array%s (parameter leaves), got %" PRId64
                       "; its parameters:",
                       leaves, leaves == 1 ? "" : "s", given);
    for (int64_t p = 0; p < nparams; p++) {
        char *shape = cxla_shape_to_string(cxla_executable_parameter_shape(exe, p),
                                           CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_strbuf_printf(&b, "\n  parameter %" PRId64 ": %s", p, shape ? shape : "?");
        free(shape);
    }
    if (given == 0 && nparams == 0) cxla_strbuf_puts(&b, " none");
    cxla_status s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", b.data ? b.data : "");
    cxla_strbuf_free(&b);
    return s;
}

/* ---- printing results ------------------------------------------------------------- */

enum { SUMMARY_THRESHOLD = 1000, EDGE_ITEMS = 3 };

/* The braces as the literal text prints full arrays (literal_text.c, XLA's one-line
 * form), so that summarized and full results read alike: a rank-1 array hugs its braces,
 * higher ranks pad them with spaces, and from rank 4 an inner brace names the index above
 * it. */
static void print_summary_dim(cxla_strbuf *b, const cxla_literal *lit, int64_t dim,
                              int64_t *index) {
    const cxla_shape *s = cxla_literal_shape(lit);
    int64_t n = cxla_literal_dynamic_size(lit, dim);
    bool hug = s->rank == 1 || (dim == s->rank - 1 && n <= 1);
    if (hug)
        cxla_strbuf_putc(b, '{');
    else if (s->rank > 3 && dim > 0 && dim < s->rank - 1)
        cxla_strbuf_printf(b, "{ /*i%" PRId64 "=%" PRId64 "*/%s", dim - 1, index[dim - 1],
                           n > 0 ? " " : "");
    else
        cxla_strbuf_puts(b, "{ ");
    for (int64_t i = 0; i < n; i++) {
        if (n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
            cxla_strbuf_puts(b, ", ...");
            i = n - EDGE_ITEMS - 1;
            continue;
        }
        if (i) cxla_strbuf_puts(b, ", ");
        index[dim] = i;
        if (dim + 1 < s->rank) {
            print_summary_dim(b, lit, dim + 1, index);
        } else {
            int64_t linear = cxla_shape_linear_index(s, index);
            cxla_literal_print_element(b, s->type,
                                       (const char *)cxla_literal_data_const(lit) +
                                           (size_t)linear * cxla_type_storage(s->type));
        }
    }
    cxla_strbuf_puts(b, hug ? "}" : " }");
}

static void print_result(FILE *out, const cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    if (cxla_type_is_array(s->type) && s->rank > 0 &&
        cxla_literal_element_count(lit) > SUMMARY_THRESHOLD) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        char *shape = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_strbuf_puts(&b, shape ? shape : "?");
        free(shape);
        if (!cxla_shape_is_static(s)) { /* the dynamic sizes, as literal text has them */
            for (int64_t i = 0; i < s->rank; i++)
                cxla_strbuf_printf(&b, "%c%" PRId64, i ? ',' : '(',
                                   cxla_literal_dynamic_size(lit, i));
            cxla_strbuf_putc(&b, ')');
        }
        cxla_strbuf_putc(&b, ' ');
        int64_t index[CXLA_MAX_RANK] = {0};
        print_summary_dim(&b, lit, 0, index);
        fprintf(out, "%s\n", b.data ? b.data : "");
        cxla_strbuf_free(&b);
        return;
    }
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            print_result(out, cxla_literal_tuple_element_const(lit, i));
        return;
    }
    char *text = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE);
    fprintf(out, "%s\n", text ? text : "?");
    free(text);
}

/* Writes each leaf of |lit| to DIR/<prefix>N.npy, N counting from *next. */
static cxla_status write_leaves(const cxla_literal *lit, const char *dir, const char *prefix,
                                int64_t *next) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            CXLA_RETURN_IF_ERROR(
                write_leaves(cxla_literal_tuple_element_const(lit, i), dir, prefix, next));
        return NULL;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s%" PRId64 ".npy", dir, prefix, (*next)++);
    if (!cxla_type_is_array(cxla_literal_type(lit))) return NULL; /* tokens have no data */
    return cxla_npy_write_file(path, lit);
}

/* Reports (to stderr, when |report|) each result leaf holding NaN or Inf; returns how
 * many do. */
static int64_t count_non_finite(const cxla_literal *lit, int64_t *leaf, bool report) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        int64_t n = 0;
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            n += count_non_finite(cxla_literal_tuple_element_const(lit, i), leaf, report);
        return n;
    }
    int64_t index = (*leaf)++;
    cxla_type t = cxla_literal_type(lit);
    if (!cxla_type_is_float(t) && !cxla_type_is_complex(t)) return 0;
    size_t esize = cxla_type_storage(t);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / esize), bad = 0;
    const char *p = cxla_literal_data_const(lit);
    for (int64_t i = 0; i < n; i++) {
        double re, im;
        cxla_load_c128(t, p + (size_t)i * esize, &re, &im);
        bad += !isfinite(re) || !isfinite(im);
    }
    if (bad && report)
        fprintf(stderr,
                "cxla: result %" PRId64 " has %" PRId64 " non-finite elements of %" PRId64 "\n",
                index, bad, n);
    return bad ? 1 : 0;
}

static int64_t report_non_finite(const cxla_literal *lit, int64_t *leaf) {
    return count_non_finite(lit, leaf, true);
}

/* Without --check-finite, one line saying that the result is not finite and how to find
 * where it stopped being so. */
static void hint_non_finite(const cxla_literal *lit) {
    int64_t leaf = 0, n = count_non_finite(lit, &leaf, false);
    if (n)
        fprintf(stderr,
                "cxla: note: %" PRId64 " of the %" PRId64 " result arrays hold NaN or inf; "
                "--check-finite names the first instruction that produced one\n",
                n, leaf);
}

/* ---- the command ---------------------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median, min and max of the |n| times |t| (sorted here), the first run among them; with
 * several runs also the first alone, the cold one (first touches of memory, caches), so
 * that a reader can tell it from the rest (it is seldom the min). */
static void print_phase(const char *name, double *t, int n) {
    double first = t[0];
    qsort(t, (size_t)n, sizeof(double), compare_doubles);
    fprintf(stderr, "%-8s median %10.3f ms   min %10.3f ms   max %10.3f ms", name, t[n / 2] * 1e3,
            t[0] * 1e3, t[n - 1] * 1e3);
    if (n > 1) fprintf(stderr, "   first %10.3f ms", first * 1e3);
    fputc('\n', stderr);
}

/* --repeat's memory line (docs/cli.md): the library's peak of memory held over the runs
 * (base/memcount.h: literals' data, the cpu backend's arenas), the module's live-set
 * bound when known (interp_memory.h), and the process's peak resident set. */
static void print_mem_size(const char *what, double bytes) {
    fprintf(stderr, "%s %9.1f MiB", what, bytes / (1024.0 * 1024.0));
}

static void print_memory(size_t peak, const interp_memory_bound *bound) {
    fprintf(stderr, "%-8s", "memory");
    print_mem_size("peak", (double)peak);
    if (bound) {
        size_t total = bound->params + bound->constants + bound->live;
        print_mem_size("   bound", (double)total);
        if (total) fprintf(stderr, " (peak %.2fx)", (double)peak / (double)total);
        print_mem_size(": parameters", (double)bound->params);
        print_mem_size(" + constants", (double)bound->constants);
        print_mem_size(" + live set", (double)bound->live);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        print_mem_size("   process", (double)ru.ru_maxrss * 1024.0);
    fputc('\n', stderr);
}

/* Reads an input or infeed value: a .npy file (|type| resolves dtypes NumPy lacks) or a
 * literal in text form. */

/* The element type of the module's first infeed with array data: the hint for .npy
 * files of types NumPy lacks. */
static cxla_type first_infeed_type(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (in->opcode == CXLA_OP_INFEED && in->shape.type == CXLA_TUPLE &&
                in->shape.tuple_count == 2 && cxla_type_is_array(in->shape.elements[0].type))
                return in->shape.elements[0].type;
        }
    return CXLA_TYPE_INVALID;
}

/* Elided constants get generated values, with a warning unless |quiet|. */
static cxla_status fill_elided_constants(cxla_module *m, uint64_t *state, bool quiet) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            cxla_instr *in = m->comps[c]->instrs[i];
            if (in->opcode != CXLA_OP_CONSTANT || !in->literal_elided || in->literal) continue;
            if (!quiet)
                fprintf(stderr, "cxla: warning: constant %s was elided; using generated values\n",
                        in->name);
            cxla_literal *lit;
            CXLA_RETURN_IF_ERROR(make_random(&in->shape, state, &lit));
            CXLA_RETURN_IF_ERROR(cxla_module_adopt_literal(m, lit));
            in->literal = lit;
        }
    return NULL;
}

/* Writes the array leaves of each outfed value to DIR/outfeed0.npy, outfeed1.npy, ... */
static cxla_status write_outfeed(cxla_literal **values, int64_t count, const char *dir) {
    int64_t next = 0;
    for (int64_t v = 0; v < count; v++) {
        CXLA_RETURN_IF_ERROR(write_leaves(values[v], dir, "outfeed", &next));
    }
    return NULL;
}

/* ---- runs on several devices -------------------------------------------------------- */

/* DIR/replica<r> for one partition, DIR/replica<r>/partition<p> for several: where device
 * |d| reads its inputs (--input-dir) and writes its outputs (-o). */
static void device_dir(const char *dir, int64_t partitions, int64_t d, char *buf, size_t size) {
    if (partitions > 1)
        snprintf(buf, size, "%s/replica%" PRId64 "/partition%" PRId64, dir, d / partitions,
                 d % partitions);
    else
        snprintf(buf, size, "%s/replica%" PRId64, dir, d);
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Device |d|'s arguments from --input-dir: in<j>.npy (j counts parameter leaves) in its
 * own directory, or in DIR itself when it has none (inputs shared by every device). */
static cxla_status load_device_args(cxla_executable *exe, const char *dir, int64_t partitions,
                                    int64_t d, cxla_literal **out) {
    char base[4096];
    device_dir(dir, partitions, d, base, sizeof(base));
    const char *from = is_dir(base) ? base : dir;
    int64_t leaves = cxla_executable_parameter_leaf_count(exe);
    int64_t nparams = cxla_executable_parameter_count(exe);
    char **paths = calloc((size_t)(leaves ? leaves : 1), sizeof(*paths));
    cxla_status s = paths ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t j = 0; j < leaves && !s; j++) {
        size_t len = strlen(from) + 32;
        paths[j] = malloc(len);
        if (!paths[j])
            s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        else
            snprintf(paths[j], len, "%s/in%" PRId64 ".npy", from, j);
    }
    int64_t next = 0;
    for (int64_t p = 0; p < nparams && !s; p++)
        s = build_arg(cxla_executable_parameter_shape(exe, p), paths, &next, &out[p]);
    for (int64_t j = 0; paths && j < leaves; j++) free(paths[j]);
    free(paths);
    return s;
}

/* Writes device |d|'s result leaves to its directory under |dir| (made as needed). */
static cxla_status write_device_result(const cxla_literal *result, const char *dir,
                                       int64_t partitions, int64_t d) {
    char path[4096];
    mkdir(dir, 0777);
    snprintf(path, sizeof(path), "%s/replica%" PRId64, dir, d / partitions);
    mkdir(path, 0777);
    device_dir(dir, partitions, d, path, sizeof(path));
    mkdir(path, 0777);
    int64_t next = 0;
    return write_leaves(result, path, "out", &next);
}

/* "replica 1", or "replica 1 partition 0" when there are several partitions. */
static void device_label(int64_t partitions, int64_t d, char *buf, size_t size) {
    if (partitions > 1)
        snprintf(buf, size, "replica %" PRId64 " partition %" PRId64, d / partitions,
                 d % partitions);
    else
        snprintf(buf, size, "replica %" PRId64, d);
}

/* Prints device |d|'s result under a label ("replica 1:"), in one write so that the
 * blocks of MPI processes do not mix. */
static void print_device_result(const cxla_literal *result, int64_t partitions, int64_t d) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    char name[64];
    device_label(partitions, d, name, sizeof(name));
    fprintf(f, "%s:\n", name);
    print_result(f, result);
    fclose(f);
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    free(text);
}

typedef struct run_flags {
    const char *module_path, *out_dir, *outfeed_dir, *backend, *input_dir;
    uint64_t seed;
    long repeat;
    int64_t replicas, partitions; /* 0: not given */
    int64_t module_partitions;    /* the module's num_partitions (0: not stated) */
    int64_t module_replicas;      /* the module's replica_count (0: not stated) */
    double collective_timeout;    /* 0: not given */
    double timeout;               /* --timeout: 0: none */
    bool check_finite, mpi, quiet;
    char **inputs, **infeeds;
    int64_t ninputs, ninfeeds;
    const fake_constraint *fake; /* per entry parameter, for generated inputs (or NULL) */
    int64_t nfake;
} run_flags;

/* The arguments of every device (args[d * nparams + p]): from --input-dir, or the same
 * for all (INPUTs on the command line, or generated from the seed). Each literal is
 * owned once, in |owned| (nparams entries per device when read per device, else
 * nparams in all). */
static cxla_status device_args(cxla_executable *exe, const run_flags *f, int64_t partitions,
                               int64_t first, int64_t count, cxla_literal **owned,
                               const cxla_literal **args) {
    int64_t nparams = cxla_executable_parameter_count(exe);
    cxla_status s = NULL;
    if (f->input_dir) {
        for (int64_t d = 0; d < count && !s; d++) {
            s = load_device_args(exe, f->input_dir, partitions, first + d, owned + d * nparams);
            if (s) {
                char name[64];
                device_label(partitions, first + d, name, sizeof(name));
                s = cxla_status_annotate(s, "the inputs of %s", name);
            }
            for (int64_t p = 0; p < nparams && !s; p++)
                args[d * nparams + p] = owned[d * nparams + p];
        }
        return s;
    }
    int64_t leaves = cxla_executable_parameter_leaf_count(exe);
    uint64_t state = f->seed;
    if (f->ninputs == 0) {
        for (int64_t p = 0; p < nparams && !s; p++) {
            s = fake_args_make(cxla_executable_parameter_shape(exe, p),
                               constraint_of(f->fake, f->nfake, p), &state, &owned[p]);
            if (s) s = cxla_status_annotate(s, "generating the input of parameter %" PRId64, p);
        }
    } else if (f->ninputs != leaves) {
        s = input_count_error(exe, f->ninputs);
    } else {
        int64_t next = 0;
        for (int64_t p = 0; p < nparams && !s; p++)
            s = build_arg(cxla_executable_parameter_shape(exe, p), f->inputs, &next, &owned[p]);
    }
    for (int64_t d = 0; d < count && !s; d++)
        for (int64_t p = 0; p < nparams; p++) args[d * nparams + p] = owned[p];
    return s;
}

static void run_options_of(const run_flags *f, cxla_run_options *o) {
    cxla_run_options_init(o);
    o->check_finite = f->check_finite;
    o->replica_count = f->replicas;
    o->partition_count = f->partitions;
    o->collective_timeout_seconds = f->collective_timeout;
    o->cancel = run_cancel;
}

/* The partition count of the run (as cxla_executable_execute decides it). */
static int64_t partitions_of(const run_flags *f) {
    return f->partitions > 0 ? f->partitions : f->module_partitions > 0 ? f->module_partitions : 1;
}

/* `cxla run --replicas N`: every device in a thread of this process. */
static cxla_status run_threads(cxla_executable *exe, const run_flags *f, double t_parse,
                               double t_compile) {
    cxla_run_options o;
    run_options_of(f, &o);
    int64_t n = 0;
    CXLA_RETURN_IF_ERROR(cxla_executable_device_count(exe, &o, &n));
    int64_t partitions = partitions_of(f);
    int64_t nparams = cxla_executable_parameter_count(exe);
    size_t cells = (size_t)(n * nparams + 1);
    cxla_literal **owned = calloc(cells, sizeof(*owned));
    const cxla_literal **args = calloc(cells, sizeof(*args));
    const cxla_literal *const **rows = calloc((size_t)n, sizeof(*rows));
    cxla_literal **results = calloc((size_t)n, sizeof(*results));
    int runs = f->repeat > 0 ? (int)f->repeat : 1;
    double *times = calloc((size_t)runs, sizeof(double));
    cxla_status s = owned && args && rows && results && times
                        ? NULL
                        : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    double t0 = tool_now();
    if (!s) s = device_args(exe, f, partitions, 0, n, owned, args);
    double t_inputs = tool_now() - t0;
    for (int64_t d = 0; d < n && !s; d++) rows[d] = args + d * nparams;
    tool_progress progress = {0};
    if (!s && f->repeat > 0) tool_progress_start(&progress, "run", f->repeat);
    tool_ticker ticker = {0};
    if (!s && f->repeat <= 0 && !f->quiet) tool_ticker_start(&ticker, "running", ticker_delay());
    for (int r = 0; r < runs && !s; r++) {
        for (int64_t d = 0; d < n; d++) {
            cxla_literal_free(results[d]);
            results[d] = NULL;
        }
        t0 = tool_now();
        s = cxla_executable_execute(exe, &o, rows, nparams, results);
        times[r] = tool_now() - t0;
        if (f->repeat > 0) tool_progress_update(&progress, r + 1, NULL);
    }
    if (f->repeat > 0) tool_progress_finish(&progress);
    tool_ticker_stop(&ticker);
    if (s) s = cxla_status_annotate(s, "%s", f->module_path);
    if (!s && f->repeat > 0) {
        double parse_times[1] = {t_parse}, compile_times[1] = {t_compile};
        double input_times[1] = {t_inputs};
        fprintf(stderr, "%ld runs of %s on %" PRId64 " devices\n", f->repeat, f->module_path, n);
        print_phase("parse", parse_times, 1);
        print_phase("compile", compile_times, 1);
        print_phase("inputs", input_times, 1);
        print_phase("run", times, runs);
    }
    for (int64_t d = 0; d < n && !s; d++) {
        if (!f->quiet) print_device_result(results[d], partitions, d);
        int64_t leaf = 0;
        if (f->check_finite)
            report_non_finite(results[d], &leaf);
        else if (!f->quiet)
            hint_non_finite(results[d]);
        if (f->out_dir) s = write_device_result(results[d], f->out_dir, partitions, d);
    }
    for (int64_t i = 0; owned && i < n * nparams; i++) cxla_literal_free(owned[i]);
    for (int64_t d = 0; results && d < n; d++) cxla_literal_free(results[d]);
    free(owned);
    free(args);
    free(rows);
    free(results);
    free(times);
    return s;
}

/* `cxla run --mpi`: this process is device `rank` of a run across the processes of
 * mpirun. Returns the exit status. */
static int run_mpi(cxla_executable *exe, cxla_status compile_failure, const run_flags *f) {
    cxla_mpi_session *session = NULL;
    cxla_status s = cxla_mpi_session_create(NULL, NULL, &session);
    if (s) {
        cxla_status_free(compile_failure);
        return tool_fail(s);
    }
    int64_t rank = cxla_mpi_session_rank(session);
    cxla_run_options o;
    run_options_of(f, &o);
    int64_t partitions = partitions_of(f);
    int64_t nparams = exe ? cxla_executable_parameter_count(exe) : 0;
    cxla_literal **owned = calloc((size_t)(nparams + 1), sizeof(*owned));
    const cxla_literal **args = calloc((size_t)(nparams + 1), sizeof(*args));
    cxla_literal *result = NULL;
    if (compile_failure) {
        /* Take part as a failed device, so that the others stop at once naming this one
         * instead of waiting for it until their time limit. */
        s = cxla_executable_execute_mpi_failed(session, NULL, &o, compile_failure);
    } else {
        cxla_status load = owned && args
                               ? device_args(exe, f, partitions, rank, 1, owned, args)
                               : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        if (load)
            s = cxla_executable_execute_mpi_failed(session, exe, &o, load);
        else
            s = cxla_executable_execute_mpi(session, exe, &o, args, nparams, &result);
        if (s) s = cxla_status_annotate(s, "%s", f->module_path);
    }
    if (!s) {
        if (!f->quiet) print_device_result(result, partitions, rank);
        int64_t leaf = 0;
        if (f->check_finite)
            report_non_finite(result, &leaf);
        else if (!f->quiet)
            hint_non_finite(result);
        if (f->out_dir) s = write_device_result(result, f->out_dir, partitions, rank);
    }
    cxla_literal_free(result);
    for (int64_t p = 0; owned && p < nparams; p++) cxla_literal_free(owned[p]);
    free(owned);
    free(args);
    int rc = 0;
    if (s) {
        fprintf(stderr, "cxla (rank %" PRId64 "): %s\n", rank, cxla_status_message(s));
        cxla_status_free(s);
        rc = 1;
    }
    cxla_mpi_session_destroy(session);
    return rc;
}

/* ---- the command line ------------------------------------------------------------------ */

static const char *const value_options[] = {
    "-o",          "--backend",
    "--seed",      "--repeat",
    "--infeed",    "--outfeed-dir",
    "--replicas",  "--partitions",
    "--input-dir", "--collective-timeout",
    "--timeout",
};

static bool takes_value(const char *a) {
    for (size_t i = 0; i < sizeof(value_options) / sizeof(value_options[0]); i++)
        if (strcmp(a, value_options[i]) == 0) return true;
    return false;
}

/* An argument that looks like an option: "--x", or "-" and a letter ("-1" may be a
 * literal input). */
static bool looks_like_option(const char *a) {
    return a[0] == '-' &&
           ((a[1] == '-' && a[2]) || (a[1] >= 'a' && a[1] <= 'z') || (a[1] >= 'A' && a[1] <= 'Z'));
}

/* Whole-string numbers: a count of at least |min|, or a positive number of seconds. */
static bool parse_count(const char *option, const char *text, long long min, long long *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < min) {
        fprintf(stderr, "cxla run: %s needs %s, got '%s'\n", option,
                min > 0 ? "a positive count" : "a whole number", text);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_seed(const char *text, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-') {
        fprintf(stderr, "cxla run: --seed needs a whole number (0 to 2^64-1), got '%s'\n", text);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_seconds(const char *option, const char *text, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > 0) || !isfinite(v)) {
        fprintf(stderr, "cxla run: %s needs a positive number of seconds, got '%s'\n", option,
                text);
        return false;
    }
    *out = v;
    return true;
}

/* ---- help ------------------------------------------------------------------------------ */

const char *const cmd_run_usage_more =
    "\n"
    "Checks before the run (before inputs are made or the module compiled):\n"
    "- -o DIR and --outfeed-dir DIR: the folder is made, with the folders above it that\n"
    "  are missing, and must take files; otherwise the run fails at once, naming it.\n"
    "- Devices: a run that lacks a replica, partition or device that the module's\n"
    "  collectives (replica_groups, source_target_pairs; called computations too) or\n"
    "  shardings (devices=[...], maximal device=N: partitions) name, or that has one a\n"
    "  collective's explicit groups leave out, fails at once, naming the instruction and\n"
    "  the flag to give ('... the module needs at least 4 devices; give --partitions 4').\n"
    "\n"
    "--check-finite names the instruction inside a called computation (call, while,\n"
    "conditional, fusion; a one-operation reducer as 'the to_apply of' its reduce,\n"
    "reduce-window, scatter or all-reduce). The cpu backend compiles a map's computation\n"
    "or a longer reducer into the instruction's kernel and names that instruction; the\n"
    "interpreter (--backend interpreter) names the instruction inside.\n";

/* ---- output folders ------------------------------------------------------------------ */

/* Makes folder |path| of |option| (-o, --outfeed-dir) and the folders above it that are
 * missing, and checks that a file can be made in it, so that a bad folder fails before
 * the run, not after it. Errors name the option and the path. */
static cxla_status prepare_dir(const char *path, const char *option) {
    if (!path) return NULL;
    if (!*path)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s needs a folder name, got ''", option);
    char *p = strdup(path);
    if (!p) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = NULL;
    for (char *q = p + 1;; q++) {
        if (*q != '/' && *q != '\0') continue;
        char c = *q;
        *q = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "%s %s: cannot create the folder '%s' (%s)", option, path, p,
                           strerror(errno));
        else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s %s: '%s' is there and is not a folder",
                           option, path, p);
        *q = c;
        if (s || !c) break;
    }
    free(p);
    if (s) return s;
    /* A file made and removed at once: permissions, read-only file systems, quotas. */
    char probe[4096];
    snprintf(probe, sizeof(probe), "%s/.cxla-write-check-%ld", path, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s %s: cannot write in the folder (%s)",
                          option, path, strerror(errno));
    close(fd);
    unlink(probe);
    return NULL;
}

/* ---- the devices a module names ------------------------------------------------------ */

static int64_t at_least(int64_t a, int64_t b) {
    return a > b ? a : b;
}

static int64_t at_most(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* Checks, before inputs are made or the module compiled, that the run of |f| has every
 * device the collectives and shardings of |m| name (the library checks it again before
 * each run, for every caller); on failure the message ends with the flags to give. Not
 * under --mpi: the device count comes from mpirun there (the library checks it). */
static cxla_status check_devices(const cxla_module *m, const run_flags *f, bool multi) {
    if (f->mpi) return NULL;
    bool r_stated = m->replica_count > 1, p_stated = m->num_partitions > 1;
    int64_t mr = r_stated ? m->replica_count : 1, mp = p_stated ? m->num_partitions : 1;
    /* A count that the header states and a flag contradicts (the library says so too,
     * but only once the module is compiled and the inputs made). */
    if (multi && r_stated && f->replicas > 0 && f->replicas != mr)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s is written for %" PRId64 " replicas (replica_count=%" PRId64
                          " in its header), and --replicas asks for %" PRId64
                          "; give --replicas %" PRId64 " or leave it out",
                          f->module_path, mr, mr, f->replicas, mr);
    if (multi && p_stated && f->partitions > 0 && f->partitions != mp)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s is written for %" PRId64 " partitions (num_partitions=%" PRId64
                          " in its header), and --partitions asks for %" PRId64
                          "; give --partitions %" PRId64 " or leave it out",
                          f->module_path, mp, mp, f->partitions, mp);
    int64_t r = multi && f->replicas > 0 ? f->replicas : mr;
    int64_t p = multi && f->partitions > 0 ? f->partitions : mp;
    exec_device_needs needs;
    exec_device_needs_of(m, &needs);
    cxla_status s = exec_device_needs_check(&needs, r, p);
    if (!s) return NULL;
    /* The run that has them: replicas and partitions within what the module names, and
     * for flattened ids more (or fewer) of the count the header leaves free (when it
     * leaves both: the one the flags did not set, else partitions, as SPMD has it). */
    int64_t nr = at_most(at_least(r, needs.replicas.count), needs.replicas.at_most);
    int64_t np = at_most(at_least(p, needs.partitions.count), needs.partitions.at_most);
    nr = at_least(nr, 1), np = at_least(np, 1);
    bool free_r = !r_stated && (p_stated || (f->partitions > 0 && !f->replicas));
    int64_t dmin = needs.devices.count, dmax = needs.devices.at_most;
    if (nr > INT64_MAX / np || nr * np < dmin) {
        if (free_r)
            nr = at_least(nr, (dmin + np - 1) / np);
        else
            np = at_least(np, (dmin + nr - 1) / nr);
    } else if (nr * np > dmax) {
        if (free_r)
            nr = at_least(1, dmax / np);
        else
            np = at_least(1, dmax / nr);
    }
    cxla_status out, again = exec_device_needs_check(&needs, nr, np);
    if (again || (r_stated && nr != mr) || (p_stated && np != mp)) {
        /* No run has what the collectives name (with the counts the header states). */
        out = cxla_error(cxla_status_code_of(s),
                         "%s: %s; and no run of replicas x partitions%s suits every "
                         "collective (the module contradicts itself)",
                         f->module_path, cxla_status_message(s),
                         r_stated || p_stated ? " with the counts its header states" : "");
        cxla_status_free(again);
    } else {
        char flags[96] = "";
        if (nr != r) snprintf(flags, sizeof(flags), "--replicas %" PRId64, nr);
        if (np != p)
            snprintf(flags + strlen(flags), sizeof(flags) - strlen(flags),
                     "%s--partitions %" PRId64, nr != r ? " " : "", np);
        /* "PATH: ...: the module needs at least 4 devices; give --partitions 4" */
        out = cxla_error(cxla_status_code_of(s), "%s: %s; give %s", f->module_path,
                         cxla_status_message(s), flags);
    }
    cxla_status_free(s);
    return out;
}

/* Parses the command line into |f|; false (after a message) on a usage error. */
static bool parse_flags(int argc, char **argv, run_flags *f) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (takes_value(a) && i + 1 >= argc) {
            fprintf(stderr, "cxla run: %s needs a value\n", a);
            return false;
        }
        long long v = 0;
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            f->quiet = true;
        } else if (strcmp(a, "--check-finite") == 0) {
            f->check_finite = true;
        } else if (strcmp(a, "--mpi") == 0) {
            f->mpi = true;
        } else if (strcmp(a, "-o") == 0) {
            f->out_dir = argv[++i];
        } else if (strcmp(a, "--outfeed-dir") == 0) {
            f->outfeed_dir = argv[++i];
        } else if (strcmp(a, "--infeed") == 0) {
            f->infeeds[f->ninfeeds++] = argv[++i];
        } else if (strcmp(a, "--input-dir") == 0) {
            f->input_dir = argv[++i];
        } else if (strcmp(a, "--backend") == 0) {
            f->backend = argv[++i];
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_seed(argv[++i], &f->seed)) return false;
        } else if (strcmp(a, "--repeat") == 0) {
            if (!parse_count(a, argv[++i], 1, &v)) return false;
            f->repeat = (long)v;
        } else if (strcmp(a, "--replicas") == 0) {
            if (!parse_count(a, argv[++i], 1, &v)) return false;
            f->replicas = v;
        } else if (strcmp(a, "--partitions") == 0) {
            if (!parse_count(a, argv[++i], 1, &v)) return false;
            f->partitions = v;
        } else if (strcmp(a, "--collective-timeout") == 0) {
            if (!parse_seconds(a, argv[++i], &f->collective_timeout)) return false;
        } else if (strcmp(a, "--timeout") == 0) {
            if (!parse_seconds(a, argv[++i], &f->timeout)) return false;
        } else if (looks_like_option(a)) {
            fprintf(stderr, "cxla run: unknown option '%s' (see 'cxla help run')\n", a);
            return false;
        } else if (!f->module_path) {
            f->module_path = a;
        } else {
            f->inputs[f->ninputs++] = argv[i];
        }
    }
    if (!f->module_path) {
        fprintf(stderr, "usage: cxla run MODULE [INPUT...] [-o DIR] [--backend NAME] "
                        "[--seed N] [--repeat N] [--infeed FILE]... [--outfeed-dir DIR]\n"
                        "                [--replicas N] [--partitions P] [--input-dir DIR] "
                        "[--collective-timeout S] [--timeout S] [--mpi]\n");
        return false;
    }
    bool multi = f->replicas > 0 || f->partitions > 0 || f->input_dir || f->mpi;
    if (multi && (f->ninfeeds > 0 || f->outfeed_dir)) {
        fprintf(stderr, "cxla run: --infeed and --outfeed-dir take runs on one device (without "
                        "--replicas, --partitions, --input-dir or --mpi)\n");
        return false;
    }
    if (f->input_dir && f->ninputs > 0) {
        fprintf(stderr, "cxla run: give inputs either with --input-dir or on the command line, "
                        "not both\n");
        return false;
    }
    if (f->mpi && f->repeat > 0) {
        fprintf(stderr, "cxla run: --repeat does not combine with --mpi\n");
        return false;
    }
    return true;
}

/* The leaves of |lit| (arrays and tokens), depth-first, as buffers into b[*n ...]. */
static void leaf_buffers(cxla_literal *lit, cxla_buffer *b, int64_t *n, int64_t cap) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            leaf_buffers(cxla_literal_tuple_element(lit, i), b, n, cap);
        return;
    }
    if (*n < cap)
        b[*n] = (cxla_buffer){cxla_literal_shape(lit), cxla_literal_data(lit),
                              cxla_literal_byte_size(lit)};
    (*n)++;
}

/* --repeat runs on buffers kept from run to run (cxla_executable_run_buffers), so that
 * the runs after the first measure the computation, not the page faults of a fresh
 * result: the arguments' leaves, and a result literal made once that the runs write
 * (the cpu backend computes into it directly). Only for static shapes (a buffer has no
 * dynamic sizes); otherwise |*out_result| stays NULL and the runs take literals. */
typedef struct run_buffers {
    cxla_buffer *args, *results;
    int64_t arg_count, result_count;
} run_buffers;

static cxla_status run_buffers_make(cxla_executable *exe, cxla_literal **args, int64_t nparams,
                                    run_buffers *rb, cxla_literal **out_result) {
    const cxla_shape *rs = cxla_executable_result_shape(exe);
    if (!rs || !cxla_shape_is_static(rs)) return NULL;
    for (int64_t p = 0; p < nparams; p++)
        if (!cxla_shape_is_static(cxla_executable_parameter_shape(exe, p)) ||
            !cxla_shape_is_static(cxla_literal_shape(args[p])))
            return NULL;
    rb->arg_count = cxla_executable_parameter_leaf_count(exe);
    rb->result_count = cxla_executable_result_leaf_count(exe);
    rb->args = calloc((size_t)(rb->arg_count ? rb->arg_count : 1), sizeof(cxla_buffer));
    rb->results = calloc((size_t)(rb->result_count ? rb->result_count : 1), sizeof(cxla_buffer));
    if (!rb->args || !rb->results)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    int64_t n = 0;
    for (int64_t p = 0; p < nparams; p++) leaf_buffers(args[p], rb->args, &n, rb->arg_count);
    CXLA_RETURN_IF_ERROR(cxla_literal_create(rs, out_result));
    n = 0;
    leaf_buffers(*out_result, rb->results, &n, rb->result_count);
    return NULL;
}

int cmd_run(int argc, char **argv) {
    run_flags f = {.seed = 42}; /* no backend: CXLA_BACKEND, else the default */
    f.inputs = calloc((size_t)argc, sizeof(char *));
    f.infeeds = calloc((size_t)argc, sizeof(char *));
    const char *module_path = NULL, *out_dir = NULL, *outfeed_dir = NULL;
    uint64_t seed = 42;
    long repeat = 0;
    bool check_finite = false;
    char **inputs = f.inputs, **infeeds = f.infeeds;
    int64_t ninputs = 0, ninfeeds = 0;
    int rc = 1;
    if (!inputs || !infeeds || !parse_flags(argc, argv, &f)) goto usage_done;
    /* The output folders exist and take files before anything runs. */
    cxla_status dir_status = prepare_dir(f.out_dir, "-o");
    if (!dir_status) dir_status = prepare_dir(f.outfeed_dir, "--outfeed-dir");
    if (dir_status) {
        rc = tool_fail(dir_status);
        goto usage_done;
    }
    module_path = f.module_path;
    out_dir = f.out_dir;
    outfeed_dir = f.outfeed_dir;
    seed = f.seed;
    repeat = f.repeat;
    check_finite = f.check_finite;
    ninputs = f.ninputs;
    ninfeeds = f.ninfeeds;
    bool multi = f.replicas > 0 || f.partitions > 0 || f.input_dir || f.mpi;
    cxla_client_options copts;
    cxla_client_options_init(&copts);
    copts.backend = f.backend;
    copts.seed = seed;
    copts.quiet_fallback = f.quiet;
    cxla_client *client = NULL;
    cxla_status s = cxla_client_create(&copts, &client);
    if (s) {
        fprintf(stderr, "cxla run: %s\n", cxla_status_message(s));
        cxla_status_free(s);
        goto usage_done;
    }
    watchdog dog = {0};
    s = cxla_cancel_create(&run_cancel);
    cxla_status_free(s); /* out of memory: runs that cannot be cancelled */
    if (run_cancel) {
        catch_sigint();
        watchdog_start(&dog, f.timeout);
    }

    double t0 = tool_now();
    char *text = NULL;
    size_t size = 0;
    cxla_module *m = NULL;
    cxla_executable *exe = NULL;
    s = cxla_read_file(module_path, &text, &size);
    if (!s) s = tool_parse_text(text, size, module_path, &m);
    double t_parse = tool_now() - t0;
    if (!s && m->warnings.len) fprintf(stderr, "%s", m->warnings.data);
    if (!s) {
        f.module_partitions = m->num_partitions;
        f.module_replicas = m->replica_count;
        /* A module written for several devices runs on them (docs/cli.md). */
        if (!multi && (m->replica_count > 1 || m->num_partitions > 1)) {
            if (ninfeeds > 0 || outfeed_dir)
                s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                               "%s is written for %" PRId64 " replicas x %" PRId64
                               " partitions, and --infeed and --outfeed-dir take runs on one "
                               "device",
                               module_path, m->replica_count > 0 ? m->replica_count : 1,
                               m->num_partitions > 0 ? m->num_partitions : 1);
            multi = true;
        }
    }
    /* Every device the module names is in the run: checked before anything big. */
    if (!s) s = check_devices(m, &f, multi);
    uint64_t state = seed;
    if (!s) s = fill_elided_constants(m, &state, f.quiet);
    interp_memory_bound bound = {0};
    bool have_bound = false;
    if (!s && repeat > 0 && !multi) {
        cxla_status bs = interp_live_bound(m, &bound);
        have_bound = !bs;
        cxla_status_free(bs);
    }
    cxla_type infeed_type = m ? first_infeed_type(m) : CXLA_TYPE_INVALID;
    /* What generated inputs must satisfy, found before compiling takes the module. */
    fake_constraint *fake = !s && ninputs == 0 && !f.input_dir ? fake_args_constraints(m) : NULL;
    int64_t nfake = fake && m->entry ? m->entry->param_count : 0;
    f.fake = fake;
    f.nfake = nfake;
    t0 = tool_now();
    if (!s) {
        s = cxla_client_compile(client, m, &exe); /* takes the module */
        if (s) s = cxla_status_annotate(s, "%s", module_path);
    } else {
        cxla_module_destroy(m);
    }
    m = NULL;
    double t_compile = tool_now() - t0;
    if (multi) {
        if (f.mpi) {
            rc = run_mpi(exe, s, &f);
            s = NULL;
        } else {
            if (!s) s = run_threads(exe, &f, t_parse, t_compile);
            rc = s ? tool_fail(s) : 0;
        }
        watchdog_stop(&dog);
        cxla_cancel_destroy(run_cancel);
        run_cancel = NULL;
        free(text);
        free(fake);
        cxla_executable_destroy(exe);
        cxla_client_destroy(client);
        free(inputs);
        free(infeeds);
        return rc;
    }
    /* Arguments. */
    int64_t nparams = exe ? cxla_executable_parameter_count(exe) : 0;
    cxla_literal **args = calloc((size_t)(nparams ? nparams : 1), sizeof(*args));
    t0 = tool_now();
    if (!s) {
        int64_t leaves = cxla_executable_parameter_leaf_count(exe);
        if (ninputs == 0) {
            for (int64_t p = 0; p < nparams && !s; p++) {
                s = fake_args_make(cxla_executable_parameter_shape(exe, p),
                                   constraint_of(fake, nfake, p), &state, &args[p]);
                if (s) s = cxla_status_annotate(s, "generating the input of parameter %" PRId64, p);
            }
        } else if (ninputs != leaves) {
            s = input_count_error(exe, ninputs);
        } else {
            int64_t next = 0;
            for (int64_t p = 0; p < nparams && !s; p++)
                s = build_arg(cxla_executable_parameter_shape(exe, p), inputs, &next, &args[p]);
        }
    }
    double t_inputs = tool_now() - t0; /* generated, or read from files */
    /* Infeed values, read once and queued again for each run. */
    cxla_literal **infeed_values =
        calloc((size_t)(ninfeeds ? ninfeeds : 1), sizeof(cxla_literal *));
    for (int64_t i = 0; i < ninfeeds && !s; i++) {
        s = read_value(infeeds[i], infeed_type, &infeed_values[i]);
        if (s) s = cxla_status_annotate(s, "--infeed %s", infeeds[i]);
    }
    cxla_literal *result = NULL;
    cxla_literal **outfed = NULL;
    int64_t noutfed = 0;
    int runs = repeat > 0 ? (int)repeat : 1;
    double *times = calloc((size_t)runs, sizeof(double));
    /* A progress line on a terminal while the runs go (nothing when not a terminal). */
    tool_progress progress = {0};
    if (!s && repeat > 0) tool_progress_start(&progress, "run", repeat);
    /* A single run says it is running once it has taken a second (on a terminal). */
    tool_ticker ticker = {0};
    if (!s && repeat <= 0 && !f.quiet) tool_ticker_start(&ticker, "running", ticker_delay());
    cxla_run_options ropts;
    cxla_run_options_init(&ropts);
    ropts.check_finite = check_finite;
    ropts.cancel = run_cancel;
    run_buffers rb = {0};
    if (!s && repeat > 0) s = run_buffers_make(exe, args, nparams, &rb, &result);
    bool on_buffers = result != NULL;
    cxla_mem_peak_reset(); /* the arguments and the result buffers are held already */
    for (int r = 0; r < runs && !s; r++) {
        if (!on_buffers) {
            cxla_literal_free(result);
            result = NULL;
        }
        for (int64_t i = 0; i < noutfed; i++) cxla_literal_free(outfed[i]);
        free(outfed);
        outfed = NULL;
        noutfed = 0;
        cxla_client_infeed_clear(client); /* what the last run left */
        for (int64_t i = 0; i < ninfeeds && !s; i++) {
            cxla_literal *copy = NULL;
            s = cxla_literal_clone(infeed_values[i], &copy);
            if (!s) s = cxla_client_infeed_push(client, copy);
        }
        t0 = tool_now();
        if (!s && on_buffers)
            s = cxla_executable_run_buffers(exe, &ropts, rb.args, rb.arg_count, rb.results,
                                            rb.result_count);
        else if (!s)
            s = cxla_executable_run_with_options(exe, &ropts, (const cxla_literal *const *)args,
                                                 nparams, &result);
        if (s) s = cxla_status_annotate(s, "%s", module_path);
        times[r] = tool_now() - t0;
        noutfed = cxla_client_outfeed_count(client);
        outfed = calloc((size_t)(noutfed ? noutfed : 1), sizeof(*outfed));
        for (int64_t i = 0; i < noutfed; i++)
            cxla_status_free(cxla_client_outfeed_pop(client, &outfed[i]));
        if (repeat > 0) tool_progress_update(&progress, r + 1, NULL);
    }
    if (repeat > 0) tool_progress_finish(&progress);
    tool_ticker_stop(&ticker);
    if (!s && repeat > 0) {
        double parse_times[1] = {t_parse}, compile_times[1] = {t_compile};
        double input_times[1] = {t_inputs};
        fprintf(stderr, "%ld runs of %s\n", repeat, module_path);
        print_phase("parse", parse_times, 1);
        print_phase("compile", compile_times, 1);
        print_phase("inputs", input_times, 1);
        print_phase("run", times, runs);
        print_memory(cxla_mem_peak(), have_bound ? &bound : NULL);
    }
    if (!s && !f.quiet) print_result(stdout, result);
    if (!s && check_finite) {
        int64_t leaf = 0;
        report_non_finite(result, &leaf);
    } else if (!s && !f.quiet) {
        hint_non_finite(result);
    }
    if (!s && out_dir) {
        mkdir(out_dir, 0777);
        int64_t next = 0;
        s = write_leaves(result, out_dir, "out", &next);
    }
    if (!s && outfeed_dir) {
        mkdir(outfeed_dir, 0777);
        s = write_outfeed(outfed, noutfed, outfeed_dir);
    } else if (!s && noutfed > 0 && !f.quiet) {
        fprintf(stderr,
                "cxla: the module outfed %" PRId64 " value(s); --outfeed-dir DIR saves them\n",
                noutfed);
    }
    if (!s && !f.quiet && cxla_client_infeed_count(client) > 0)
        fprintf(stderr, "cxla: warning: %" PRId64 " infeed value(s) were not read\n",
                cxla_client_infeed_count(client));
    for (int64_t p = 0; p < nparams; p++) cxla_literal_free(args[p]);
    for (int64_t i = 0; i < ninfeeds; i++) cxla_literal_free(infeed_values[i]);
    for (int64_t i = 0; i < noutfed; i++) cxla_literal_free(outfed[i]);
    free(outfed);
    free(infeed_values);
    free(args);
    free(rb.args);
    free(rb.results);
    free(times);
    free(text);
    free(fake);
    cxla_literal_free(result);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    free(inputs);
    free(infeeds);
    watchdog_stop(&dog);
    cxla_cancel_destroy(run_cancel);
    run_cancel = NULL;
    if (s) return tool_fail(s);
    return 0;
usage_done:
    free(inputs);
    free(infeeds);
    return rc;
}
