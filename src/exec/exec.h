/* What every backend needs at run time, below the runtime and above the backends: the
 * host callbacks (infeed, outfeed, send, recv), the communicator through which the
 * collectives of a multi-device run meet, the options of one device's run, and the
 * backend interface itself. The runtime (src/runtime) provides the callbacks and
 * communicators and calls backends through exec_backend; the backends (src/interp,
 * src/cpu) implement it. */
#ifndef CXLA_EXEC_EXEC_H_
#define CXLA_EXEC_EXEC_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/literal.h"
#include "cxla/status.h"
#include "hlo/hlo.h"

/* The host side of infeed, outfeed, send and recv (interp_host.c runs them on the
 * interpreter): callbacks that the layer running a backend (src/runtime) installs, called in
 * program order with |user|. A NULL callback makes the operation fail with an error saying so.
 * Literals handed to a callback are borrowed; literals it returns become the interpreter's. */
typedef struct exec_host {
    void *user;
    /* A new literal compatible with |shape| (the infeed's data shape, with its layout). */
    cxla_status (*infeed)(void *user, const cxla_shape *shape, const char *config,
                          cxla_literal **out);
    /* |data| is in the layout of |shape| (outfeed_shape, or the operand's shape). */
    cxla_status (*outfeed)(void *user, const cxla_literal *data, const cxla_shape *shape,
                           const char *config);
    cxla_status (*send)(void *user, int64_t channel_id, bool is_host_transfer,
                        const cxla_literal *data);
    /* A new literal compatible with |shape| (the data that recv-done returns). */
    cxla_status (*recv)(void *user, int64_t channel_id, bool is_host_transfer,
                        const cxla_shape *shape, cxla_literal **out);
} exec_host;
/* ---- devices and communicators ------------------------------------------------------
 *
 * A run of a module on several devices (replicas x partitions) runs the interpreter once
 * per device, each with an exec_comm through which its collectives meet those of the
 * others. Devices are numbered replica * partition_count + partition (XLA's flattened
 * ids). The collectives themselves (interp_collective.c) are written once, on top of one
 * point-to-point primitive, exchange; the communicators (src/runtime: threads in one
 * process, MPI across processes) only carry messages. */

/* One step of one collective on this device: it sends sends[k * parts ... + parts - 1]
 * (borrowed arrays) to device to[k], for each of |send_count| devices, and receives
 * |parts| arrays from each device from[j] into recvs[j * parts ...] (new row-major
 * literals that the caller owns). (op_id, sequence) name the collective instance: the
 * instruction's id and how many times this device executed it before. They are equal on
 * all devices that run the same program, and a message goes only to the exchange of
 * the same instance on its destination, whatever the order in which devices get there.
 * A device never sends to itself. */
typedef struct exec_exchange {
    const cxla_instr *instr; /* the collective, for messages */
    int64_t op_id, sequence;
    int64_t parts;
    int64_t send_count;
    const int64_t *to;
    const cxla_literal *const *sends;
    int64_t recv_count;
    const int64_t *from;
    cxla_literal **recvs;
    /* How many of the communicator's time limits the receive may wait (0 counts as 1):
     * 2 for a receive from a device that first waits for the rest of the group (the
     * leader of an all-reduce), so that the leader, which knows who is missing, times
     * out first. */
    int64_t wait_rounds;
} exec_exchange;

typedef struct exec_comm exec_comm;
struct exec_comm {
    int64_t replica_count, partition_count; /* the devices of the run */
    /* Performs |x|. Sends do not wait for the receivers. A receive waits for its messages
     * and fails, naming the devices involved, when a device it waits for failed or ended
     * its program without sending, or when the communicator's time limit passes first
     * (the message then says which devices arrived and which did not). On failure no
     * recvs are set. */
    cxla_status (*exchange)(exec_comm *comm, const exec_exchange *x);
};

/* An error for |instr| that names it and its opcode: "add.3 (add, line 4): <message>". */
cxla_status exec_error(const cxla_instr *instr, cxla_status_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* "replica 2", or "replica 2 partition 1" when there are several partitions. */
void exec_device_name(int64_t partition_count, int64_t device, char *buf, size_t size);

/* ---- cancellation ---------------------------------------------------------------------
 *
 * A run ends even when its program does not: whoever holds an exec_cancel (the caller
 * through the public cxla_cancel, which is this struct; `cxla run` on SIGINT or
 * --timeout; a multi-device run when one device fails or a collective times out) may
 * request it at any time from any thread, or from a signal handler, and the run then
 * fails with a status that names the instruction it was at.
 *
 * The contract for every backend (the interpreter's driver, src/interp/interp.c; the
 * cpu backend):
 * - exec_cancelled(options->cancel) is checked between steps (instructions, or a
 *   compiled backend's sequence of kernels), at every while-loop back-edge, and inside a
 *   long kernel at a coarse grain (say every few milliseconds of work). It is an atomic
 *   relaxed load (plus one of the parent): cheap enough to call per instruction.
 * - exec_cancel_poll(options->cancel) is called at a coarse grain (every thousand or
 *   so steps) by the thread that called execute, and only by it: it runs the
 *   communicator's hook that reads messages from other processes (an MPI rank learns
 *   that another failed while it runs no collective).
 * - When cancelled, the backend stops, frees what it holds and returns
 *   exec_cancel_error(cancel, where) (code CANCELLED-like: the requester's code, or
 *   DEADLINE_EXCEEDED for time limits), where names the instruction.
 * A NULL exec_cancel is never cancelled. */
typedef struct cxla_cancel exec_cancel; /* the public cxla_cancel of cxla/runtime.h */
struct cxla_cancel {
    atomic_int requested; /* 0, or 1 once the fields below are set */
    atomic_int claimed;   /* the first requester wins (compare-exchange 0 -> 1) */
    int code;             /* cxla_status_code of the failure */
    const char *reason;   /* kept by pointer: a string that outlives the run */
    /* Checked too, with its own parents: the caller's cancellation of a run that has
     * its own (a multi-device run's; a run started inside a run, such as StableHLO's
     * interpreter.run_parallel, has the outer run's). NULL: none. */
    const exec_cancel *parent;
    /* Called by exec_cancel_poll; may request |self|. NULL: none. */
    void (*poll)(exec_cancel *self, void *poll_user);
    void *poll_user;
};

/* A fresh, not requested cancellation with |parent| (may be NULL). */
void exec_cancel_init(exec_cancel *c, const exec_cancel *parent);
/* Requests |c| with status |code| and |reason| (kept by pointer, not copied). Only the
 * first request counts. Async-signal-safe (lock-free atomics, no allocation). */
void exec_cancel_request(exec_cancel *c, int code, const char *reason);

/* Whether |c| or one of its parents (a run nested in a run: a chain) was requested. */
static inline bool exec_cancelled(const exec_cancel *c) {
    for (; c; c = c->parent)
        if (atomic_load_explicit(&c->requested, memory_order_relaxed)) return true;
    return false;
}

/* Runs |c|'s poll hook (if any), then returns exec_cancelled(c). */
bool exec_cancel_poll(exec_cancel *c);

/* A cancellation that requests itself (DEADLINE_EXCEEDED) once |ns| nanoseconds have
 * passed, seen when it is polled: for work done on the interpreter at compile time (constant
 * folding, the cpu plan's trial of a handler), which must end even when a computation in the
 * module loops for ever. |c| points to |d|, which must outlive its use. */
typedef struct exec_deadline {
    int64_t until_ns; /* CLOCK_MONOTONIC */
} exec_deadline;
void exec_cancel_init_deadline(exec_cancel *c, exec_deadline *d, int64_t ns);

/* The failure of a run that |c| (cancelled) stopped at |where| ("instruction x
 * (add, computation main, line 4)"; NULL: nowhere in particular): "<where>: the run was
 * cancelled: <reason>", with the requester's code. */
cxla_status exec_cancel_error(const exec_cancel *c, const char *where);
/* The cancellation of the run for which this thread is calling a foreign custom call
 * (exec_custom_call_invoke sets it around the call), or NULL: a target that starts runs
 * of its own (exec_run_devices) makes it their parent, so cancelling the outer run
 * cancels them too. */
exec_cancel *exec_cancel_current(void);
/* Makes |c| this thread's current cancellation; returns the one it replaces. */
exec_cancel *exec_cancel_swap_current(exec_cancel *c);

/* exec_cancel_error where |instr| was running: "at x (add, computation main, line 4)". */
cxla_status exec_cancel_error_at(const exec_cancel *c, const cxla_instr *instr);

typedef struct exec_run_options {
    /* The module seed of rng (XLA's HloModuleConfig seed): it is xor'ed into each rng
     * instruction's key. rng-get-and-update-state does not use it (docs/semantics.md). */
    uint64_t seed;
    int64_t replica_id; /* what replica-id returns */
    int64_t partition_id;
    /* The other devices of a multi-device run, or NULL for a run on one device: then the
     * groups come from the module's replica_count and num_partitions, a collective whose
     * group has other members fails, and a collective-permute's sends to other devices
     * are dropped. */
    exec_comm *comm;
    /* Report (to stderr) the first instruction that produces a NaN or Inf from operands
     * that had none: a debugging aid for `cxla run --check-finite`. */
    bool check_finite;
    const exec_host *host; /* infeed, outfeed, send, recv; NULL: none */
    /* The run's cancellation (see "cancellation" above); NULL: none. */
    exec_cancel *cancel;
    /* Donation (cxla_run_options.donated): by entry argument leaf (depth-first), whether the
     * run may overwrite that argument's memory; NULL: none may be written. A backend may
     * ignore it (the interpreter does). */
    const bool *donated;
    /* Out, by result leaf (NULL: not asked; the caller fills it with -1): a backend that
     * computed result leaf k in the memory of donated argument leaf j (one the module's
     * input_output_alias pairs with k) sets in_place_arg[k] = j, and the leaf k of the
     * literal it returns then holds nothing of use. */
    int64_t *in_place_arg;
    /* Caller memory for the result (cxla_executable_run_buffers), by result leaf
     * (depth-first); NULL: none. A non-NULL result_data[k] offers result_size[k] bytes
     * (at least the leaf's) for leaf k, a static array, in the leaf's entry result layout;
     * the runtime offers only buffers that share no memory with each other or with any
     * argument, aligned to their element size (up to 8), so that writing one early cannot
     * change what the run reads. A backend that computed leaf k there sets
     * result_written[k] (the caller fills it with false), and leaf k of the literal it
     * returns then holds no data (data NULL, size 0). A backend may ignore the offer (the
     * interpreter takes it only for leaves that an instruction of the entry makes: see
     * cxla_executable_run_buffers; the runtime copies the others). */
    void *const *result_data;
    const size_t *result_size;
    bool *result_written;
} exec_run_options;

/* ---- the backend interface ------------------------------------------------------------
 *
 * A backend turns a verified module into its compiled form once and then runs it any
 * number of times, from several threads at once (one run per device of a replicated
 * run). The interpreter (src/interp) and the compiled cpu backend (src/cpu) implement it;
 * the runtime keeps the list and calls through it. */

typedef struct exec_compile_options {
    /* Worker threads the backend may use; 0 picks one per core. */
    int thread_count;
} exec_compile_options;

typedef struct exec_backend {
    const char *name;  /* canonical: "interpreter", "cpu" */
    const char *alias; /* another accepted name ("interp"), or NULL */
    /* Compiles |module| (verified; it stays the caller's and outlives the compiled form,
     * which may point into it) into |*out_compiled|. */
    cxla_status (*compile)(const cxla_module *module, const exec_compile_options *options,
                           void **out_compiled);
    /* Runs the entry computation on |args| (borrowed, in the entry layout) into a new
     * literal in the entry result layout, as interp_run_module does. Safe to call from
     * several threads at once on one compiled form. */
    cxla_status (*execute)(void *compiled, const exec_run_options *options,
                           const cxla_literal *const *args, int64_t arg_count,
                           cxla_literal **out_result);
    void (*destroy)(void *compiled);
} exec_backend;

/* ---- runs on several devices, for layers below the runtime ---------------------------
 *
 * A target below the runtime (StableHLO's interpreter.run_parallel, src/stablehlo) may
 * need to run a module on several devices with collectives between them, which only the
 * runtime can do (threads and their communicator). The runtime installs its runner here
 * when a client is created (cxla_client_create); until then exec_run_devices fails. */

typedef struct exec_devices_options {
    int64_t replica_count, partition_count; /* >= 1 each */
    /* How long one device waits in a collective for the others; 0: the runtime's default. */
    double timeout_seconds;
    const exec_host *host; /* shared by the devices; NULL: none */
    /* The parent of the devices' cancellation (the run that started this one:
     * exec_cancel_current()); NULL: none. */
    exec_cancel *cancel;
} exec_devices_options;

/* Runs the entry of |module| (verified) on every device d = replica * partition_count +
 * partition with args[d] (|arg_count| borrowed literals); out_results[d] gets device d's
 * result (caller frees each); on failure none are set. */
typedef cxla_status (*exec_run_devices_fn)(const cxla_module *module,
                                           const exec_devices_options *options,
                                           const cxla_literal *const *const *args,
                                           int64_t arg_count, cxla_literal **out_results);

/* Installs the runner (thread-safe; the last one wins). */
void exec_set_run_devices(exec_run_devices_fn fn);
/* Calls the installed runner. Errors: FAILED_PRECONDITION when none is installed (no
 * client was created in this process), and whatever the runner returns. */
cxla_status exec_run_devices(const cxla_module *module, const exec_devices_options *options,
                             const cxla_literal *const *const *args, int64_t arg_count,
                             cxla_literal **out_results);

#endif /* CXLA_EXEC_EXEC_H_ */
