/* Runs a module on several devices in one process: one thread per device, each running
 * the interpreter with its own replica and partition ids and the threads communicator
 * (comm_threads.c) between them. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "runtime/replicas.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* Threads are cheap but not free: a bound that no real run reaches. */
enum { MAX_DEVICES = 4096 };
/* The interpreter recurses per nested call; give each device the main thread's room. */
#define DEVICE_STACK_BYTES ((size_t)16 << 20)

cxla_status cxla_replicas_device_count(const cxla_module *module,
                                       const cxla_replicas_options *options,
                                       int64_t *out_partitions, int64_t *out_devices) {
    int64_t r = options->replica_count;
    int64_t p = options->partition_count > 0 ? options->partition_count
                : module->num_partitions > 0 ? module->num_partitions
                                             : 1;
    if (r < 1)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "the replica count must be at least 1, got %" PRId64, r);
    if (module->replica_count > 1 && module->replica_count != r)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "module '%s' is written for %" PRId64 " replicas (replica_count=%" PRId64
                          ") but was asked to run on %" PRId64,
                          module->name, module->replica_count, module->replica_count, r);
    if (module->num_partitions > 1 && module->num_partitions != p)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "module '%s' is written for %" PRId64
                          " partitions (num_partitions=%" PRId64
                          ") but was asked to run on %" PRId64,
                          module->name, module->num_partitions, module->num_partitions, p);
    int64_t n;
    if (!cxla_mul_i64(r, p, &n) || n > MAX_DEVICES)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%" PRId64 " replicas x %" PRId64 " partitions is more than the %d "
                          "devices a run may have",
                          r, p, MAX_DEVICES);
    *out_partitions = p;
    *out_devices = n;
    return NULL;
}

typedef struct device_run {
    const cxla_module *module;
    const cxla_replicas_options *ro;
    exec_run_options options;
    const cxla_literal *const *args;
    int64_t arg_count;
    cxla_comm_threads *comm;
    int64_t device;
    cxla_literal *result;
    cxla_status status;
} device_run;

static void *device_main(void *arg) {
    device_run *run = arg;
    run->status = cxla_replicas_execute(run->module, run->ro, &run->options, run->args,
                                        run->arg_count, &run->result);
    cxla_comm_threads_finish(run->comm, run->device, run->status);
    return NULL;
}

cxla_status cxla_run_replicated(const cxla_module *module, const cxla_replicas_options *options,
                                const cxla_literal *const *const *args, int64_t arg_count,
                                cxla_literal **out_results, cxla_status *out_device_status) {
    if (!module || !options || !out_results || (arg_count > 0 && !args))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_run_replicated: missing argument");
    int64_t partitions, n;
    CXLA_RETURN_IF_ERROR(cxla_replicas_device_count(module, options, &partitions, &n));
    double timeout =
        options->timeout_seconds > 0 ? options->timeout_seconds : CXLA_COLLECTIVE_TIMEOUT_DEFAULT;
    cxla_comm_threads *comm = NULL;
    CXLA_RETURN_IF_ERROR(cxla_comm_threads_create(options->replica_count, partitions, timeout,
                                                  options->cancel, &comm));
    device_run *runs = calloc((size_t)n, sizeof(*runs));
    pthread_t *threads = calloc((size_t)n, sizeof(*threads));
    bool *started = calloc((size_t)n, sizeof(*started));
    if (!runs || !threads || !started) {
        free(runs);
        free(threads);
        free(started);
        cxla_comm_threads_destroy(comm);
        return OOM();
    }
    for (int64_t d = 0; d < n; d++) {
        device_run *r = &runs[d];
        r->module = module;
        r->ro = options;
        r->options.seed = options->seed;
        r->options.check_finite = options->check_finite;
        r->options.host = options->host;
        r->options.cancel = cxla_comm_threads_cancel(comm);
        r->options.replica_id = d / partitions;
        r->options.partition_id = d % partitions;
        r->options.comm = cxla_comm_threads_endpoint(comm, d);
        r->args = arg_count > 0 ? args[d] : NULL;
        r->arg_count = arg_count;
        r->comm = comm;
        r->device = d;
    }
    if (n == 1) {
        device_main(&runs[0]);
    } else {
        pthread_attr_t attr;
        bool have_attr = pthread_attr_init(&attr) == 0;
        if (have_attr) pthread_attr_setstacksize(&attr, DEVICE_STACK_BYTES);
        for (int64_t d = 0; d < n; d++) {
            started[d] =
                pthread_create(&threads[d], have_attr ? &attr : NULL, device_main, &runs[d]) == 0;
            if (!started[d]) {
                /* Fail this device so that the others stop waiting for it. */
                runs[d].status =
                    cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "could not start its thread");
                cxla_comm_threads_finish(comm, d, runs[d].status);
            }
        }
        if (have_attr) pthread_attr_destroy(&attr);
        for (int64_t d = 0; d < n; d++)
            if (started[d]) pthread_join(threads[d], NULL);
    }
    cxla_status root = NULL;
    int64_t first = cxla_comm_threads_first_failure(comm, &root);
    cxla_status s = NULL;
    if (first >= 0) {
        char name[64];
        exec_device_name(partitions, first, name, sizeof(name));
        s = cxla_error(cxla_status_code_of(root), "%s failed: %s", name, cxla_status_message(root));
        cxla_status_free(root);
    }
    for (int64_t d = 0; d < n; d++) {
        if (s) {
            cxla_literal_free(runs[d].result);
        } else {
            out_results[d] = runs[d].result;
        }
        if (out_device_status)
            out_device_status[d] = runs[d].status;
        else
            cxla_status_free(runs[d].status);
    }
    free(runs);
    free(threads);
    free(started);
    cxla_comm_threads_destroy(comm);
    return s;
}

#ifndef CXLA_HAVE_MPI
/* A build without MPI (CMake did not find it): the MPI entry points say so. */
static cxla_status no_mpi(void) {
    return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                      "this cxla was built without MPI (install Open MPI, e.g. Debian's "
                      "libopenmpi-dev and openmpi-bin, and build it again)");
}

bool cxla_mpi_available(void) {
    return false;
}

cxla_status cxla_mpi_session_create(int *argc, char ***argv, cxla_mpi_session **out_session) {
    (void)argc;
    (void)argv;
    *out_session = NULL;
    return no_mpi();
}

int64_t cxla_mpi_session_rank(const cxla_mpi_session *session) {
    (void)session;
    return 0;
}

int64_t cxla_mpi_session_size(const cxla_mpi_session *session) {
    (void)session;
    return 1;
}

cxla_status cxla_mpi_run(cxla_mpi_session *session, const cxla_module *module,
                         const cxla_replicas_options *options, const cxla_literal *const *args,
                         int64_t arg_count, cxla_literal **out_result) {
    (void)session;
    (void)module;
    (void)options;
    (void)args;
    (void)arg_count;
    (void)out_result;
    return no_mpi();
}

cxla_status cxla_mpi_run_failed(cxla_mpi_session *session, const cxla_module *module,
                                const cxla_replicas_options *options, cxla_status failure) {
    (void)session;
    (void)module;
    (void)options;
    cxla_status_free(failure);
    return no_mpi();
}

void cxla_mpi_session_destroy(cxla_mpi_session *session) {
    (void)session;
}
#endif

static cxla_status run_devices(const cxla_module *module, const exec_devices_options *options,
                               const cxla_literal *const *const *args, int64_t arg_count,
                               cxla_literal **out_results) {
    cxla_replicas_options o = {.replica_count = options->replica_count,
                               .partition_count = options->partition_count,
                               .timeout_seconds = options->timeout_seconds,
                               .host = options->host,
                               .cancel = options->cancel};
    return cxla_run_replicated(module, &o, args, arg_count, out_results, NULL);
}

void cxla_replicas_install_runner(void) {
    exec_set_run_devices(run_devices);
}
