/* cxla/runtime.h: clients, executables and runs.
 *
 *   cxla_client_create(&options, &client)            a backend and its host state
 *   cxla_client_compile_hlo_file(client, path, &exe)  (or _hlo_text, or a module)
 *   cxla_client_compile_stablehlo_file(client, path, &exe)  StableHLO MLIR (or _text)
 *   cxla_executable_run(exe, args, n, &result)        literals in, a literal out
 *   cxla_executable_execute(exe, &options, args_per_device, n, results)
 *                                                     on several replicas/partitions
 *   cxla_executable_execute_mpi(session, exe, ...)    one device per MPI process
 *   cxla_executable_destroy(exe); cxla_client_destroy(client);
 *
 * Ownership:
 *   - The caller owns the client (cxla_client_destroy) and each executable
 *     (cxla_executable_destroy). An executable keeps its client alive: destroying a client
 *     whose executables still live only marks it; it is freed with the last executable.
 *   - An executable owns the module it was compiled from.
 *   - The client owns the host state shared by its executables: the infeed queue, the
 *     outfeed queue and the channels' mailboxes.
 *   - Literals passed in are borrowed unless a function says it takes them; literals
 *     returned through out_ parameters are the caller's (cxla_literal_free).
 *
 * Host transfers: infeed reads the client's infeed queue (cxla_client_infeed_push) and
 * outfeed appends to its outfeed queue (cxla_client_outfeed_pop), in program order. A
 * send on channel k hands its data to the handler registered for k (or for every
 * channel), or else leaves it in channel k's mailbox, where a later recv on channel k (in
 * the same run or a later run of any executable of the client) or cxla_client_channel_pop
 * finds it; a recv takes from the handler or the mailbox (cxla_client_channel_push fills
 * it). Nothing blocks: an empty queue or mailbox is an error naming the instruction.
 *
 * Threads: a client and its executables may be used from several threads at once; runs
 * proceed concurrently and the queues are shared in the order operations reach them.
 * Handlers are called on the running thread, without any cxla lock held.
 */
#ifndef CXLA_RUNTIME_H_
#define CXLA_RUNTIME_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/hlo.h"
#include "cxla/literal.h"
#include "cxla/shape.h"
#include "cxla/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cxla_client cxla_client;
typedef struct cxla_executable cxla_executable;
/* A computation built with the builder API (cxla/builder.h). */
typedef struct cxla_xla_computation cxla_xla_computation;

/* ---- clients ------------------------------------------------------------------------ */

/* The backend of a client, first match wins:
 *   1. options.backend when it is not NULL;
 *   2. else the environment variable CXLA_BACKEND when it is set and not empty
 *      ("interpreter" or "cpu");
 *   3. else the default: "cpu" when a C compiler runs ($CXLA_CC, else cc, asked for its
 *      --version once per process), otherwise "interpreter", and then one line goes to
 *      stderr, once per process: "cxla: no C compiler found (set CXLA_CC or install
 *      build-essential): using the interpreter" (options.quiet_fallback or
 *      CXLA_QUIET_FALLBACK=1 silence it).
 * A backend named in 1 or 2 is used as named: "cpu" without a compiler fails when a module
 * is compiled (FAILED_PRECONDITION naming CXLA_CC and the Debian package build-essential);
 * it never falls back. */
typedef struct cxla_client_options {
    /* "cpu" (the compiled backend), "interpreter" (the reference interpreter; "interp" is
     * the same) or NULL: CXLA_BACKEND, else the default (above). */
    const char *backend;
    /* Worker threads for backends that use them; 0 picks one per core. The interpreter
     * runs each computation on the calling thread. */
    int thread_count;
    /* The seed of the random-number operations (rng, rng-get-and-update-state). */
    uint64_t seed;
    /* true: no line on stderr when the default falls back to the interpreter. */
    bool quiet_fallback;
} cxla_client_options;

/* Fills |options| with the defaults: no backend named (CXLA_BACKEND, else the default),
 * thread_count 0, seed 0, quiet_fallback false. */
void cxla_client_options_init(cxla_client_options *options);
/* A new client; |options| NULL means the defaults. Errors: an unknown backend, named by
 * the options or by CXLA_BACKEND (NOT_FOUND, listing the available ones), a negative
 * thread count (INVALID_ARGUMENT). */
cxla_status cxla_client_create(const cxla_client_options *options, cxla_client **out_client);
/* Releases the client (see Ownership). NULL is fine. Literals still queued are freed. */
void cxla_client_destroy(cxla_client *client);
/* The backend's canonical name ("cpu" or "interpreter"), valid as long as the client. */
const char *cxla_client_backend(const cxla_client *client);
/* The backend a client created now with no backend in its options would get (steps 2 and
 * 3 above), without creating one and without the stderr line: |*out_name| (may be NULL)
 * gets its canonical name (a static string); |out_reason| (may be NULL) gets why, in
 * words, NUL-terminated in |size| bytes: "CXLA_BACKEND=cpu", "the C compiler runs: gcc
 * ...", or "no C compiler: ..." (`cxla version` prints them). Errors: CXLA_BACKEND names
 * no backend (NOT_FOUND). */
cxla_status cxla_default_backend(const char **out_name, char *out_reason, size_t size);

/* ---- host queues -------------------------------------------------------------------- */

/* Appends |literal| to the infeed queue; the queue takes it (also on error). The next
 * infeed instruction that runs reads it; its shape must match the infeed's data shape
 * (type and dimensions; any layout). Errors: NULL literal (INVALID_ARGUMENT). */
cxla_status cxla_client_infeed_push(cxla_client *client, cxla_literal *literal);
/* Items pushed and not yet read. */
int64_t cxla_client_infeed_count(cxla_client *client);
/* Drops (frees) every item not yet read. */
void cxla_client_infeed_clear(cxla_client *client);
/* Takes the oldest value that an outfeed instruction wrote; the caller owns it. Its
 * layout is the outfeed's (outfeed_shape, else the operand's). Errors: an empty queue
 * (OUT_OF_RANGE). */
cxla_status cxla_client_outfeed_pop(cxla_client *client, cxla_literal **out_literal);
/* Values waiting in the outfeed queue. */
int64_t cxla_client_outfeed_count(cxla_client *client);

/* ---- channels (send, recv) ------------------------------------------------------------ */

/* Registers handlers for every channel without its own. */
#define CXLA_CHANNEL_ANY (-1)

/* Receives what a send on |channel_id| sends; |data| is borrowed for the call (clone it
 * to keep it), in the layout the send declares for its data (element 0 of the send's
 * shape; the builder's cxla_send_to_host shape_with_layout). An error stops the run. */
typedef cxla_status (*cxla_send_handler)(void *user, int64_t channel_id, bool is_host_transfer,
                                         const cxla_literal *data);
/* Provides the data of a recv on |channel_id|: a new literal compatible with |shape|
 * (type and dimensions; any layout), which cxla takes. An error stops the run. */
typedef cxla_status (*cxla_recv_handler)(void *user, int64_t channel_id, bool is_host_transfer,
                                         const cxla_shape *shape, cxla_literal **out_literal);

/* Installs handlers for |channel_id| (>= 0) or for every other channel (CXLA_CHANNEL_ANY),
 * replacing earlier ones; a NULL handler leaves that direction to the mailbox. |user| is
 * passed to both. Errors: a channel id below -1 (INVALID_ARGUMENT). */
cxla_status cxla_client_set_channel_handlers(cxla_client *client, int64_t channel_id,
                                             cxla_send_handler send, cxla_recv_handler recv,
                                             void *user);
/* Puts |literal| (taken, also on error) in channel |channel_id|'s mailbox, for a recv. */
cxla_status cxla_client_channel_push(cxla_client *client, int64_t channel_id,
                                     cxla_literal *literal);
/* Takes the oldest literal in channel |channel_id|'s mailbox (what a send left there).
 * Errors: an empty mailbox (OUT_OF_RANGE). */
cxla_status cxla_client_channel_pop(cxla_client *client, int64_t channel_id,
                                    cxla_literal **out_literal);
/* Literals waiting in channel |channel_id|'s mailbox (0 for a channel never used). */
int64_t cxla_client_channel_count(cxla_client *client, int64_t channel_id);

/* ---- executables -------------------------------------------------------------------- */

/* Compiles |module| (from cxla_hlo_parse, cxla/hlo.h) for the client's backend (the
 * interpreter verifies it). The executable takes the module, also on error (it is then
 * destroyed). Errors: the
 * verifier's, naming the computation and instruction. */
cxla_status cxla_client_compile(cxla_client *client, cxla_module *module,
                                cxla_executable **out_executable);
/* Parses HLO text (|len| bytes; (size_t)-1 for NUL-terminated) and compiles it.
 * |filename| names the text in error messages (NULL is fine). Parse errors give the line
 * and column. Warnings (unknown attributes) are dropped. */
cxla_status cxla_client_compile_hlo_text(cxla_client *client, const char *text, size_t len,
                                         const char *filename, cxla_executable **out_executable);
/* Reads HLO text from |path| and compiles it. Errors: an unreadable file (NOT_FOUND or
 * UNAVAILABLE), then as _hlo_text. */
cxla_status cxla_client_compile_hlo_file(cxla_client *client, const char *path,
                                         cxla_executable **out_executable);
/* Parses StableHLO MLIR text (|len| bytes; (size_t)-1 for NUL-terminated), converts it
 * to HLO as cxla_stablehlo_parse does (cxla/stablehlo.h: the entry is @main, or the only
 * public function) and compiles it. |filename| names the text in error messages (NULL is
 * fine). Check operations in the program (check.expect_*) run as custom-calls that add to
 * the process-wide tally (cxla_stablehlo_checks_get). Errors: the converter's
 * ("FILE:LINE:COL: message": syntax, unknown operations, unsupported types), then as
 * cxla_client_compile. */
cxla_status cxla_client_compile_stablehlo_text(cxla_client *client, const char *text, size_t len,
                                               const char *filename,
                                               cxla_executable **out_executable);
/* Reads StableHLO text from |path| and compiles it. Errors: an unreadable file
 * (NOT_FOUND or UNAVAILABLE), then as _stablehlo_text. */
cxla_status cxla_client_compile_stablehlo_file(cxla_client *client, const char *path,
                                               cxla_executable **out_executable);
/* Compiles a computation built with the builder API (cxla/builder.h). The computation
 * stays the caller's (the executable has its own copy). Errors: as cxla_client_compile. */
cxla_status cxla_client_compile_computation(cxla_client *client,
                                            const cxla_xla_computation *computation,
                                            cxla_executable **out_executable);
/* NULL is fine. */
void cxla_executable_destroy(cxla_executable *executable);

/* The entry computation's signature, in the entry layout; shapes are borrowed and live
 * as long as the executable. NULL for an index out of range. */
int64_t cxla_executable_parameter_count(const cxla_executable *executable);
const cxla_shape *cxla_executable_parameter_shape(const cxla_executable *executable, int64_t i);
const cxla_shape *cxla_executable_result_shape(const cxla_executable *executable);
/* Array leaves and tokens of all parameters (depth-first), i.e. how many buffers
 * cxla_executable_run_buffers takes; and those of the result. */
int64_t cxla_executable_parameter_leaf_count(const cxla_executable *executable);
int64_t cxla_executable_result_leaf_count(const cxla_executable *executable);

/* ---- runs --------------------------------------------------------------------------- */

/* ---- cancellation -------------------------------------------------------------------- */

/* A run's cancellation: give it to one or more runs (cxla_run_options.cancel) and request
 * it from any thread, or from a signal handler, to make them end. A run that sees the
 * request stops between two instructions (the interpreter checks before each one, so a
 * while loop that never ends stops too) and fails with |code| and a message that names
 * the instruction it was at: "at x (while, computation main, line 7): the run was
 * cancelled: <reason>". Runs on several devices stop on every device; the verdict names
 * the first device that stopped. A request stays: runs given a requested cancellation
 * fail at their first instruction. The caller owns it (cxla_cancel_destroy, after the
 * runs that use it have returned). */
typedef struct cxla_cancel cxla_cancel;
/* Errors: RESOURCE_EXHAUSTED. */
cxla_status cxla_cancel_create(cxla_cancel **out_cancel);
/* Requests |cancel|: the runs fail with |code| (CXLA_STATUS_OK means
 * CXLA_STATUS_CANCELLED; CXLA_STATUS_DEADLINE_EXCEEDED suits a time limit) and |reason|,
 * which is kept by pointer and must outlive the runs (a string literal). Only the first
 * request counts. Async-signal-safe. NULL is ignored. */
void cxla_cancel_request(cxla_cancel *cancel, cxla_status_code code, const char *reason);
/* Whether |cancel| was requested (false for NULL). */
bool cxla_cancel_requested(const cxla_cancel *cancel);
void cxla_cancel_destroy(cxla_cancel *cancel);

/* How to run. Fields are added over time; always start from cxla_run_options_init. */
typedef struct cxla_run_options {
    /* cxla_executable_run*: what replica-id and partition-id return (0). The runs of
     * several devices (cxla_executable_execute*) set them per device. */
    int64_t replica_id;
    int64_t partition_id;
    /* Report (to stderr) the first instruction that makes a NaN or Inf out of finite
     * operands. */
    bool check_finite;
    /* cxla_executable_execute and _execute_mpi: the run's replicas and partitions (the
     * devices are replica_count x partition_count). 0 means the module's own
     * (replica_count=, num_partitions= in its header), else 1; under MPI a replica count
     * of 0 means (processes / partitions). A module that states a count runs only on
     * that many. */
    int64_t replica_count;
    int64_t partition_count;
    /* How long one device waits in one collective for the others before the run fails
     * (naming the devices that did not arrive), in seconds; 0: the default, 600. */
    double collective_timeout_seconds;
    /* Ends the run when requested (see cxla_cancel); NULL: none. Borrowed. */
    cxla_cancel *cancel;
    /* Donation, as PJRT's donated buffers (cxla_executable_run_buffers only; the other runs
     * refuse it with INVALID_ARGUMENT): NULL, or one flag per argument buffer
     * (cxla_executable_parameter_leaf_count of them, depth-first), borrowed for the call.
     * The caller gives up the contents of a donated buffer: the run may overwrite it, and
     * after the run it holds unspecified bytes unless it is also a result buffer. A buffer
     * not donated is never written. See cxla_executable_run_buffers for where the results
     * then go. */
    const bool *donated;
} cxla_run_options;
void cxla_run_options_init(cxla_run_options *options);

/* Runs the entry computation on |args| (|arg_count| literals, one per parameter, any
 * layout) and returns the result in the entry result layout. Errors: the wrong number or
 * shapes of arguments (INVALID_ARGUMENT), a module whose collectives or shardings name
 * more devices than the module states (replica_count x num_partitions, else one) or
 * whose groups leave one of those out (INVALID_ARGUMENT before the run starts, naming the
 * instruction and the count: see cxla_executable_device_count), and whatever an
 * instruction reports (each naming the instruction): an empty infeed queue, a missing
 * custom-call target, ... */
cxla_status cxla_executable_run(cxla_executable *executable, const cxla_literal *const *args,
                                int64_t arg_count, cxla_literal **out_result);
/* The same with options (NULL: the defaults). */
cxla_status cxla_executable_run_with_options(cxla_executable *executable,
                                             const cxla_run_options *options,
                                             const cxla_literal *const *args, int64_t arg_count,
                                             cxla_literal **out_result);

/* A caller-owned array in host memory: |size| bytes at |data|, laid out as |shape| (an
 * array shape; no layout means row-major). A NULL |shape| means the shape of the
 * parameter or result leaf it stands for, in the entry layout. Tokens take no memory
 * (data may be NULL).
 *
 * A leaf with bounded dynamic dimensions ("f32[<=8]") is held at its bounds, as XLA's CPU
 * buffers hold it: the elements at the bounds in the layout (the value's elements at
 * indices below its sizes, padding elsewhere), then, when |size| has room for them, the
 * sizes as one int32_t per dimension (unaligned is fine) right after those bytes. An
 * argument buffer without that room is at its bounds; a result buffer with it gets the
 * result's sizes there (without it, only the elements). */
typedef struct cxla_buffer {
    const cxla_shape *shape;
    void *data;
    size_t size;
} cxla_buffer;

/* Runs on caller-owned memory, with |options| (NULL: the defaults). |args| holds one
 * buffer per parameter leaf (depth-first; see cxla_executable_parameter_leaf_count),
 * only read unless donated (options->donated, below); |results| one buffer per result
 * leaf, written. Arguments are used in place,
 * without a copy, when the backend can read their layout directly (the interpreter:
 * row-major ones); otherwise they are relaid into a temporary. On error the result
 * buffers may be partly written.
 *
 * Results: the cpu backend computes a result leaf directly in its buffer (no copy, no
 * memory of its own) when the buffer is in the leaf's entry result layout (a NULL shape,
 * or the same layout), aligned to its element size (up to 8 bytes), and shares no memory
 * with any argument buffer or other result buffer, in a module with static shapes whose
 * entry result is row-major. The interpreter computes a leaf directly in such a buffer
 * (in any module) when the leaf's entry layout is row-major and the leaf is the value of
 * an instruction of the entry (the root, or an element of a root tuple that appears once
 * in it; not a parameter or constant) whose handler makes a new array for it. Every
 * other result buffer is filled after the run, in the buffer's layout, from the backend's
 * own memory: a result buffer overlapping an argument buffer is thus allowed, and written
 * only after the run has read its arguments. Keep the result buffers from one run to the
 * next: their pages are then not faulted in again.
 *
 * Donation (options->donated; XLA's input_output_alias): a result buffer may be the
 * memory of an argument buffer (above); when it is the memory of a donated argument
 * buffer (the same data pointer) that the module's header pairs with that result leaf
 * (input_output_alias={ {out}: (param, {index}) }, may-alias and must-alias alike), the
 * cpu backend computes the result in place, in the argument's memory, with no copy: an
 * update of the argument (dynamic-update-slice, scatter, a while loop's state) writes
 * only what it changes, and a result computed after the argument's last read is written
 * there directly. A dynamic argument (a whole parameter, row-major) is used so too, at
 * its bounds: its padding is zeroed in place first, and the result's sizes are written
 * after its elements when the buffer has room (above). Backends that cannot (the interpreter)
 * compute the result elsewhere and copy it in after the run: the bytes the caller sees are the
 * same. Donating without aliases, or aliases without donation (the cpu backend then writes only its
 * own memory), is allowed, as is a result buffer elsewhere than its donated argument
 * (the result is copied there).
 *
 * Errors: counts, shapes (type and dimensions must match; tiled layouts are refused),
 * sizes too small, a dynamic argument's size beyond its bound (or a static dimension's
 * not its size), a donated argument buffer that shares memory with another argument
 * buffer (INVALID_ARGUMENT), then as cxla_executable_run. */
cxla_status cxla_executable_run_buffers(cxla_executable *executable,
                                        const cxla_run_options *options, const cxla_buffer *args,
                                        int64_t arg_count, const cxla_buffer *results,
                                        int64_t result_count);

/* ---- runs on several devices (replicas x partitions) ------------------------------- */

/* The number of devices a run of |executable| with |options| (NULL: the defaults) has:
 * replicas x partitions. Devices are numbered d = replica * partitions + partition
 * (XLA's flattened ids); with one partition d is the replica. Errors
 * (INVALID_ARGUMENT): a negative count, counts that contradict the module's
 * replica_count or num_partitions, more than 4096 devices, and a run without a device
 * that the module's collectives (replica_groups, source_target_pairs, in every
 * computation) or shardings (devices=[...], maximal device=N: partitions) name, or with
 * a device that a collective's explicit replica_groups leave out; the message names the
 * instruction, the id and the count needed ("ar (all-reduce, computation main, line 9):
 * replica_groups name device 3 but the run has 2 devices (...): the module needs at least
 * 4 devices"). cxla_executable_execute and _execute_mpi check the same before any device
 * starts. */
cxla_status cxla_executable_device_count(const cxla_executable *executable,
                                         const cxla_run_options *options, int64_t *out_count);

/* Runs the entry computation on every device of |options| (see
 * cxla_executable_device_count), each in its own thread of this process (the calling
 * thread when there is one device), with the collectives between them.
 * |args_per_device[d]| holds device d's |arg_count| arguments (borrowed, as for
 * cxla_executable_run; arg_count 0 allows args_per_device NULL). On success
 * |results_per_device[d]| gets device d's result (the caller frees each); the array must
 * have room for the device count. On failure no result is set (the array is left as it
 * was) and the status names the device that failed first and why ("replica 2 failed:
 * ..."; "replica 1 partition 0 failed: ..." with several partitions); devices waiting
 * for a failed one fail at once instead of waiting. A device that waits in a collective
 * longer than collective_timeout_seconds fails, listing which devices arrived, and the
 * run is then cancelled on the others (so that a device that never reaches the
 * collective, e.g. in a loop that does not end, stops too: it fails with CANCELLED,
 * and the verdict is the timeout).
 * The devices share the client's host queues and channels, in the order they reach
 * them. Errors: as cxla_executable_device_count, the arguments (INVALID_ARGUMENT,
 * naming the device), then whatever a device reports. replica_id and partition_id of
 * |options| are ignored. */
cxla_status cxla_executable_execute(cxla_executable *executable, const cxla_run_options *options,
                                    const cxla_literal *const *const *args_per_device,
                                    int64_t arg_count, cxla_literal **results_per_device);

/* ---- runs across processes (MPI) ----------------------------------------------------- */

/* Whether this build of cxla has MPI (CMake found it when cxla was built). Without it
 * the functions below fail with UNIMPLEMENTED ("this cxla was built without MPI"). */
bool cxla_mpi_available(void);

/* One process's part in runs where each MPI process (rank d of MPI_COMM_WORLD) is device
 * d: start the program under `mpirun -np N`. */
typedef struct cxla_mpi_session cxla_mpi_session;

/* Initializes MPI unless the program already did (then it also leaves finalizing to the
 * program), and makes a communicator of its own, so that cxla's messages never meet the
 * program's. |argc| and |argv| are passed to MPI_Init and may be NULL. The caller owns
 * the session (cxla_mpi_session_destroy). Errors: UNIMPLEMENTED without MPI, UNAVAILABLE
 * when MPI fails to start. */
cxla_status cxla_mpi_session_create(int *argc, char ***argv, cxla_mpi_session **out_session);
/* This process's rank (its device) and the number of processes. */
int64_t cxla_mpi_session_rank(const cxla_mpi_session *session);
int64_t cxla_mpi_session_size(const cxla_mpi_session *session);
/* Finalizes MPI if the session initialized it (not after a run that other processes did
 * not end in time: see cxla_executable_execute_mpi). NULL is fine. */
void cxla_mpi_session_destroy(cxla_mpi_session *session);

/* Runs the entry computation as this process's device (rank d: replica d / partitions,
 * partition d % partitions) on |args| (|arg_count| literals, borrowed); every process
 * must call it (or _execute_mpi_failed) with the same executable and options, and the
 * device count must equal the number of processes. Returns the same verdict on every
 * process: success (|out_result| gets this device's result, the caller's), or the
 * failure of the first device that failed, naming it ("replica 2 failed: ..."). The
 * processes wait for each other at the end, so that no message of this run is left in
 * flight, each for at most the collective time limit: a process that did not end by
 * then (stuck where it reads no messages, or computing with no collective for longer)
 * fails the others with DEADLINE_EXCEEDED naming it, and their session is abandoned:
 * cxla_mpi_session_destroy then leaves MPI unfinalized (MPI_Finalize would wait for the
 * silent process), so that the process can exit and mpirun end the job. Host queues and
 * channels are this process's client's. Errors: as cxla_executable_execute, plus a
 * device count that is not the number of processes (INVALID_ARGUMENT) and MPI's own
 * failures (UNAVAILABLE); UNIMPLEMENTED without MPI. */
cxla_status cxla_executable_execute_mpi(cxla_mpi_session *session, cxla_executable *executable,
                                        const cxla_run_options *options,
                                        const cxla_literal *const *args, int64_t arg_count,
                                        cxla_literal **out_result);
/* Takes part in a run as a device that failed before it could start (it could not read
 * its inputs, ...): the other processes fail naming this device and |failure| (taken;
 * NULL is read as an internal error) instead of waiting for it. |executable| may be NULL
 * when compiling is what failed: the device count is then |options|' replica_count x
 * partition_count, or the number of processes. Returns the verdict, as
 * cxla_executable_execute_mpi (never success). */
cxla_status cxla_executable_execute_mpi_failed(cxla_mpi_session *session,
                                               cxla_executable *executable,
                                               const cxla_run_options *options,
                                               cxla_status failure);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_RUNTIME_H_ */
