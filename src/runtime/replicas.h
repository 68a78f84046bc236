/* Runs of one module on several devices (replicas x partitions) with the collectives
 * between them: in one process, one thread per device (comm_threads.c), or across
 * processes under MPI, one device per rank (comm_mpi.c). Internal to cxla: the public
 * runtime API (cxla_executable_execute, cxla_executable_execute_mpi: execute.c) and
 * `cxla run --replicas` are built on these.
 *
 * Devices are numbered d = replica * partition_count + partition (XLA's flattened ids);
 * per-device arguments and results are indexed by d. With one partition, d is the
 * replica id. */
#ifndef CXLA_RUNTIME_REPLICAS_H_
#define CXLA_RUNTIME_REPLICAS_H_

#include <stdbool.h>
#include <stdint.h>

#include "cxla/literal.h"
#include "cxla/runtime.h"
#include "cxla/status.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* The time limit of one collective when none is given: long enough for the slowest
 * device of a big interpreted program to catch up, short enough to end a hung run. */
#define CXLA_COLLECTIVE_TIMEOUT_DEFAULT 600.0

typedef struct cxla_replicas_options {
    int64_t replica_count;   /* >= 1 */
    int64_t partition_count; /* 0: the module's num_partitions */
    /* How long one device waits in one collective for the others before failing, in
     * seconds; 0: CXLA_COLLECTIVE_TIMEOUT_DEFAULT. */
    double timeout_seconds;
    uint64_t seed;     /* exec_run_options.seed of every device */
    bool check_finite; /* exec_run_options.check_finite of every device */
    /* The caller's cancellation (the parent of the run's own); NULL: none. */
    const exec_cancel *cancel;
    /* exec_run_options.host of every device (infeed, outfeed, send, recv; shared by the
     * devices of a run in this process, in the order they reach it); NULL: none. */
    const exec_host *host;
    /* The backend that runs each device and its compiled form of the module; NULL: the
     * interpreter, on the module itself. */
    const exec_backend *backend;
    void *compiled;
} cxla_replicas_options;

/* Runs one device of a run of |module| with |options|' backend. */
static inline cxla_status cxla_replicas_execute(const cxla_module *module,
                                                const cxla_replicas_options *options,
                                                const exec_run_options *run,
                                                const cxla_literal *const *args, int64_t arg_count,
                                                cxla_literal **out) {
    if (options->backend)
        return options->backend->execute(options->compiled, run, args, arg_count, out);
    return interp_run_module(module, run, args, arg_count, out);
}

/* The device count of |options| for |module|, after checking them against each other:
 * a module that states replica_count or num_partitions (> 1) runs only on that many.
 * |out_partitions| gets the partition count. */
cxla_status cxla_replicas_device_count(const cxla_module *module,
                                       const cxla_replicas_options *options,
                                       int64_t *out_partitions, int64_t *out_devices);

/* Runs the entry computation of |module| (verified) on every device, each in its own
 * thread (the calling thread when there is one device). args[d] holds the |arg_count|
 * arguments of device d (borrowed; as interp_run_module takes them). On success
 * out_results[d] gets device d's result (caller frees each). On failure no results are
 * set and the status names the device that failed first and why (a device that fails
 * makes those waiting for it fail at once, naming it); when |out_device_status| is not
 * NULL it gets each device's own status (NULL for those that succeeded; caller frees). */
cxla_status cxla_run_replicated(const cxla_module *module, const cxla_replicas_options *options,
                                const cxla_literal *const *const *args, int64_t arg_count,
                                cxla_literal **out_results, cxla_status *out_device_status);

/* Installs cxla_run_replicated (on the interpreter) as exec's runner of modules on several
 * devices (exec_set_run_devices), for targets below the runtime; cxla_client_create calls
 * it. */
void cxla_replicas_install_runner(void);

/* ---- threads in one process (comm_threads.c) -------------------------------------- */

typedef struct cxla_comm_threads cxla_comm_threads;

/* A communicator for |replicas| x |partitions| devices in this process; a receive waits
 * at most |timeout_seconds|. The run's cancellation (cxla_comm_threads_cancel) has
 * |parent| (the caller's; may be NULL) as its parent. */
cxla_status cxla_comm_threads_create(int64_t replicas, int64_t partitions, double timeout_seconds,
                                     const exec_cancel *parent, cxla_comm_threads **out_comm);
/* The run's cancellation, for exec_run_options.cancel of every device (owned by |comm|):
 * requested when a device fails of its own, so that the others stop, waiting in a
 * collective or running outside one. */
exec_cancel *cxla_comm_threads_cancel(cxla_comm_threads *comm);
/* Device |device|'s end, for exec_run_options.comm (owned by |comm|). */
exec_comm *cxla_comm_threads_endpoint(cxla_comm_threads *comm, int64_t device);
/* Device |device| ended its program with |status| (borrowed; NULL for success). A
 * failure of its own (not one caused by another device, nor the cancellation that
 * another's failure requested) poisons the communicator: every exchange waiting or to
 * come fails naming this device, and the run's cancellation is requested. A success
 * tells those waiting for its messages that none will come. */
void cxla_comm_threads_finish(cxla_comm_threads *comm, int64_t device, cxla_status status);
/* The first failure of its own that poisoned the communicator: the device (-1 when
 * none) and a copy of its status (caller frees) when |out_status| is not NULL. */
int64_t cxla_comm_threads_first_failure(cxla_comm_threads *comm, cxla_status *out_status);
void cxla_comm_threads_destroy(cxla_comm_threads *comm);

/* The errors both communicators give (comm_threads.c): a receive of execution
 * |sequence| + 1 of a collective that waited |timeout| seconds in vain, listing the
 * devices that arrived (this one, |self|, and those of |from| whose message came:
 * arrived[j]) and those that did not; a receive from |device|, which ended its program
 * without sending. */
cxla_status cxla_comm_timeout_error(int64_t partitions, double timeout, int64_t sequence,
                                    int64_t self, const int64_t *from, const bool *arrived,
                                    int64_t n);
cxla_status cxla_comm_ended_error(int64_t partitions, int64_t device, int64_t sequence);

/* ---- MPI: one device per process (comm_mpi.c) ------------------------------------- */

/* The session (cxla_mpi_session_create, _rank, _size, _destroy) and
 * cxla_mpi_available are public: cxla/runtime.h. */

/* Runs |module| as device `rank` of `size` (size must be replicas x partitions) with
 * this rank's arguments; every rank must call it. Returns the same verdict on every
 * rank: success, or the failure of the first device that failed, naming it. Ranks wait
 * for each other at the end, so that no message of this run is left in flight. */
cxla_status cxla_mpi_run(cxla_mpi_session *session, const cxla_module *module,
                         const cxla_replicas_options *options, const cxla_literal *const *args,
                         int64_t arg_count, cxla_literal **out_result);
/* Takes part in a run as a device that failed before it could start (it could not read
 * its inputs, ...): the others fail naming it and |failure| (taken). Returns the verdict,
 * as cxla_mpi_run. */
cxla_status cxla_mpi_run_failed(cxla_mpi_session *session, const cxla_module *module,
                                const cxla_replicas_options *options, cxla_status failure);
#endif /* CXLA_RUNTIME_REPLICAS_H_ */
