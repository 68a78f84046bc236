/* The public runs on several devices: cxla_executable_execute (one thread per device,
 * replicas.c) and cxla_executable_execute_mpi (one device per MPI process, comm_mpi.c).
 * Both check the caller's arguments here and translate cxla_run_options into the
 * internal cxla_replicas_options. */
#include <inttypes.h>
#include <stdlib.h>

#include "runtime/replicas.h"
#include "runtime/runtime_internal.h"

/* The internal options of a run of |e| with |options| (NULL: the defaults). A replica
 * count of 0 takes the module's (or 1), or, when |mpi_size| > 0, the number of
 * processes over the partitions. */
static cxla_status replicas_options(const cxla_executable *e, const cxla_run_options *options,
                                    int64_t mpi_size, cxla_replicas_options *out) {
    cxla_run_options defaults;
    cxla_run_options_init(&defaults);
    if (!options) options = &defaults;
    const cxla_module *m = e ? e->module : NULL; /* NULL: a device that could not compile */
    if (options->donated)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "donated arguments are for cxla_executable_run_buffers");
    if (options->replica_count < 0 || options->partition_count < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "replica_count (%" PRId64 ") and partition_count (%" PRId64
                          ") must not be negative",
                          options->replica_count, options->partition_count);
    if (!(options->collective_timeout_seconds >= 0))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "collective_timeout_seconds must be 0 (the default) or positive");
    int64_t partitions = options->partition_count > 0 ? options->partition_count
                         : m && m->num_partitions > 0 ? m->num_partitions
                                                      : 1;
    int64_t replicas = options->replica_count;
    if (replicas == 0 && m && m->replica_count > 1) replicas = m->replica_count;
    if (replicas == 0 && mpi_size > 0) {
        if (mpi_size % partitions != 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "%" PRId64 " MPI processes cannot hold %" PRId64
                              " partitions per replica (the count must divide)",
                              mpi_size, partitions);
        replicas = mpi_size / partitions;
    }
    if (replicas == 0) replicas = 1;
    *out = (cxla_replicas_options){
        .replica_count = replicas,
        .partition_count = partitions,
        .timeout_seconds = options->collective_timeout_seconds,
        .seed = e ? e->client->seed : 0,
        .check_finite = options->check_finite,
        .cancel = options->cancel,
        .host = e ? &e->client->host : NULL,
        .backend = e ? e->backend : NULL,
        .compiled = e ? e->compiled : NULL,
    };
    /* The counts agree with the module's header; then every device that its collectives
     * and shardings name must be in the run: checked here, before any device starts. */
    if (!e) return NULL;
    int64_t p, n;
    CXLA_RETURN_IF_ERROR(cxla_replicas_device_count(m, out, &p, &n));
    return exec_device_needs_check(&e->needs, replicas, p);
}

cxla_status cxla_executable_device_count(const cxla_executable *executable,
                                         const cxla_run_options *options, int64_t *out_count) {
    if (!executable || !out_count)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_executable_device_count needs an executable and a place for "
                          "the count");
    cxla_replicas_options ro;
    CXLA_RETURN_IF_ERROR(replicas_options(executable, options, 0, &ro));
    int64_t partitions;
    return cxla_replicas_device_count(executable->module, &ro, &partitions, out_count);
}

/* Checks the arguments of device |device| (|name|d in messages). */
static cxla_status check_args(const cxla_executable *e, int64_t partitions, int64_t device,
                              const cxla_literal *const *args, int64_t arg_count) {
    char name[64];
    exec_device_name(partitions, device, name, sizeof(name));
    int64_t want = cxla_executable_parameter_count(e);
    if (arg_count != want)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "the module takes %" PRId64 " arguments, %s was given %" PRId64, want,
                          name, arg_count);
    if (arg_count > 0 && !args)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "the arguments of %s are NULL", name);
    for (int64_t i = 0; i < arg_count; i++)
        if (!args[i])
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "argument %" PRId64 " of %s is NULL", i,
                              name);
    return NULL;
}

cxla_status cxla_executable_execute(cxla_executable *executable, const cxla_run_options *options,
                                    const cxla_literal *const *const *args_per_device,
                                    int64_t arg_count, cxla_literal **results_per_device) {
    if (!executable || !results_per_device || arg_count < 0 || (arg_count > 0 && !args_per_device))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_executable_execute needs an executable, the arguments of each "
                          "device and a place for the results");
    cxla_replicas_options ro;
    CXLA_RETURN_IF_ERROR(replicas_options(executable, options, 0, &ro));
    int64_t partitions, n;
    CXLA_RETURN_IF_ERROR(cxla_replicas_device_count(executable->module, &ro, &partitions, &n));
    for (int64_t d = 0; d < n; d++)
        CXLA_RETURN_IF_ERROR(check_args(executable, partitions, d,
                                        arg_count > 0 ? args_per_device[d] : NULL, arg_count));
    cxla_literal **results = calloc((size_t)n, sizeof(*results));
    if (!results) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s =
        cxla_run_replicated(executable->module, &ro, args_per_device, arg_count, results, NULL);
    if (!s)
        for (int64_t d = 0; d < n; d++) results_per_device[d] = results[d];
    free(results);
    return s;
}

cxla_status cxla_executable_execute_mpi(cxla_mpi_session *session, cxla_executable *executable,
                                        const cxla_run_options *options,
                                        const cxla_literal *const *args, int64_t arg_count,
                                        cxla_literal **out_result) {
    if (!cxla_mpi_available()) return cxla_mpi_run(session, NULL, NULL, NULL, 0, NULL);
    if (!session || !executable || !out_result || arg_count < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_executable_execute_mpi needs a session, an executable and a "
                          "place for the result");
    cxla_replicas_options ro;
    cxla_status s = replicas_options(executable, options, cxla_mpi_session_size(session), &ro);
    /* A bad argument on this process is a failure of this device: the others hear of it
     * instead of waiting. */
    if (!s) {
        int64_t partitions = ro.partition_count;
        s = check_args(executable, partitions, cxla_mpi_session_rank(session), args, arg_count);
        if (s) return cxla_mpi_run_failed(session, executable->module, &ro, s);
    }
    if (s) return s;
    return cxla_mpi_run(session, executable->module, &ro, args, arg_count, out_result);
}

cxla_status cxla_executable_execute_mpi_failed(cxla_mpi_session *session,
                                               cxla_executable *executable,
                                               const cxla_run_options *options,
                                               cxla_status failure) {
    if (!cxla_mpi_available()) {
        cxla_status_free(failure);
        return cxla_mpi_run(session, NULL, NULL, NULL, 0, NULL);
    }
    if (!session) {
        cxla_status_free(failure);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_executable_execute_mpi_failed needs a session");
    }
    cxla_replicas_options ro;
    cxla_status s = replicas_options(executable, options, cxla_mpi_session_size(session), &ro);
    if (s) {
        cxla_status_free(failure);
        return s;
    }
    return cxla_mpi_run_failed(session, executable ? executable->module : NULL, &ro, failure);
}
