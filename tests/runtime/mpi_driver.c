/* The program tests/runtime/test_mpi.sh runs: one module on several devices, either one
 * per MPI rank (under mpirun) or, with --threads, all in this process, with .npy files
 * in and out:
 *
 *   cxla_mpi_driver [--threads] [--replicas R] [--partitions P] [--timeout S] MODULE DIR
 *
 * Device d (replica r = d / P, partition p = d % P) reads its arguments, one per entry
 * parameter, from DIR/replica<r>/in<j>.npy (DIR/replica<r>/partition<p>/ when P > 1), or
 * from DIR/in<j>.npy when that device has no directory, and writes each leaf of its
 * result to the same directory as out<j>.npy. R defaults to the number of MPI processes
 * (or the module's replica_count with --threads). Exit status 0 on success; on failure
 * each process prints the verdict ("replica 2 failed: ...") and exits with 1. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"
#include "cxla/cxla.h"
#include "hlo/hlo.h"
#include "runtime/replicas.h"

static int fail(const char *who, cxla_status s) {
    fprintf(stderr, "cxla_mpi_driver%s: %s\n", who, cxla_status_message(s));
    cxla_status_free(s);
    return 1;
}

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

/* Device |d|'s arguments (|out| gets module->entry->param_count literals). */
static cxla_status load_args(const cxla_module *m, const char *dir, int64_t partitions, int64_t d,
                             cxla_literal **out) {
    char base[4096], path[4200];
    device_dir(dir, partitions, d, base, sizeof(base));
    const char *from = is_dir(base) ? base : dir;
    for (int64_t j = 0; j < m->entry->param_count; j++) {
        const cxla_shape *s = &m->entry->params[j]->shape;
        if (!cxla_type_is_array(s->type))
            return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "parameter %" PRId64 " is not an array",
                              j);
        snprintf(path, sizeof(path), "%s/in%" PRId64 ".npy", from, j);
        CXLA_RETURN_IF_ERROR(cxla_npy_read_file(path, s->type, &out[j]));
    }
    return NULL;
}

static cxla_status write_leaves(const cxla_literal *lit, const char *dir, int64_t *next) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            CXLA_RETURN_IF_ERROR(write_leaves(cxla_literal_tuple_element_const(lit, i), dir, next));
        return NULL;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/out%" PRId64 ".npy", dir, (*next)++);
    return cxla_npy_write_file(path, lit);
}

static cxla_status write_result(const cxla_literal *lit, const char *dir, int64_t partitions,
                                int64_t d) {
    char base[4096];
    device_dir(dir, partitions, d, base, sizeof(base));
    char parent[4096];
    snprintf(parent, sizeof(parent), "%s/replica%" PRId64, dir, d / partitions);
    mkdir(parent, 0777);
    mkdir(base, 0777);
    int64_t next = 0;
    return write_leaves(lit, base, &next);
}

static cxla_status load_module(const char *path, cxla_module **out) {
    char *text;
    size_t size;
    CXLA_RETURN_IF_ERROR(cxla_read_file(path, &text, &size));
    cxla_status s = cxla_hlo_parse(text, size, path, out);
    free(text);
    if (!s) s = cxla_verify_module(*out);
    if (s) {
        cxla_module_destroy(*out);
        *out = NULL;
    }
    return s;
}

static int run_threads(const cxla_module *m, cxla_replicas_options *o, const char *dir) {
    if (o->replica_count < 1) o->replica_count = m->replica_count > 0 ? m->replica_count : 1;
    int64_t partitions, n;
    cxla_status s = cxla_replicas_device_count(m, o, &partitions, &n);
    if (s) return fail("", s);
    int64_t params = m->entry->param_count;
    cxla_literal **lits = calloc((size_t)(n * params + 1), sizeof(*lits));
    const cxla_literal **rows = calloc((size_t)(n * params + 1), sizeof(*rows));
    const cxla_literal *const **args = calloc((size_t)n, sizeof(*args));
    cxla_literal **results = calloc((size_t)n, sizeof(*results));
    if (!lits || !rows || !args || !results) s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "oom");
    for (int64_t d = 0; d < n && !s; d++) {
        s = load_args(m, dir, partitions, d, lits + d * params);
        for (int64_t j = 0; j < params; j++) rows[d * params + j] = lits[d * params + j];
        args[d] = rows + d * params;
    }
    if (!s) s = cxla_run_replicated(m, o, args, params, results, NULL);
    for (int64_t d = 0; d < n && !s; d++) s = write_result(results[d], dir, partitions, d);
    for (int64_t i = 0; lits && i < n * params; i++) cxla_literal_free(lits[i]);
    for (int64_t d = 0; results && d < n; d++) cxla_literal_free(results[d]);
    free(lits);
    free(rows);
    free(args);
    free(results);
    return s ? fail("", s) : 0;
}

static int run_mpi(int *argc, char ***argv, const cxla_module *m, cxla_replicas_options *o,
                   const char *dir) {
    cxla_mpi_session *session = NULL;
    cxla_status s = cxla_mpi_session_create(argc, argv, &session);
    if (s) return fail("", s);
    int64_t rank = cxla_mpi_session_rank(session), size = cxla_mpi_session_size(session);
    if (o->replica_count < 1) {
        int64_t p = o->partition_count > 0  ? o->partition_count
                    : m->num_partitions > 0 ? m->num_partitions
                                            : 1;
        o->replica_count = size / p;
    }
    int64_t partitions = 1, n = 1;
    s = cxla_replicas_device_count(m, o, &partitions, &n);
    int64_t params = m->entry->param_count;
    cxla_literal **lits = calloc((size_t)(params + 1), sizeof(*lits));
    cxla_literal *result = NULL;
    if (!s && !lits) s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "oom");
    /* A rank that cannot read its inputs still joins the run, as a failed device, so that
     * the others hear of it instead of waiting. */
    cxla_status load = s ? NULL : load_args(m, dir, partitions, rank, lits);
    if (!s && load)
        s = cxla_mpi_run_failed(session, m, o, load);
    else if (!s)
        s = cxla_mpi_run(session, m, o, (const cxla_literal *const *)lits, params, &result);
    if (!s) s = write_result(result, dir, partitions, rank);
    cxla_literal_free(result);
    for (int64_t j = 0; lits && j < params; j++) cxla_literal_free(lits[j]);
    free(lits);
    char who[64];
    snprintf(who, sizeof(who), " (rank %" PRId64 ")", rank);
    int rc = s ? fail(who, s) : 0;
    cxla_mpi_session_destroy(session);
    return rc;
}

int main(int argc, char **argv) {
    cxla_replicas_options o = {0};
    bool threads = false;
    const char *module_path = NULL, *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--threads") == 0) {
            threads = true;
        } else if (strcmp(a, "--replicas") == 0 && i + 1 < argc) {
            o.replica_count = strtoll(argv[++i], NULL, 10);
        } else if (strcmp(a, "--partitions") == 0 && i + 1 < argc) {
            o.partition_count = strtoll(argv[++i], NULL, 10);
        } else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            o.timeout_seconds = strtod(argv[++i], NULL);
        } else if (!module_path) {
            module_path = a;
        } else if (!dir) {
            dir = a;
        } else {
            fprintf(stderr, "cxla_mpi_driver: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!module_path || !dir) {
        fprintf(stderr, "usage: cxla_mpi_driver [--threads] [--replicas R] [--partitions P] "
                        "[--timeout S] MODULE DIR\n");
        return 2;
    }
    cxla_module *m = NULL;
    cxla_status s = load_module(module_path, &m);
    if (s) return fail("", s);
    int rc = threads ? run_threads(m, &o, dir) : run_mpi(&argc, &argv, m, &o, dir);
    cxla_module_destroy(m);
    return rc;
}
