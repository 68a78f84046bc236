/* Services shared by every backend (exec.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "exec/exec.h"

void exec_device_name(int64_t partition_count, int64_t device, char *buf, size_t size) {
    if (partition_count > 1)
        snprintf(buf, size, "replica %" PRId64 " partition %" PRId64, device / partition_count,
                 device % partition_count);
    else
        snprintf(buf, size, "replica %" PRId64, device);
}

void exec_cancel_init(exec_cancel *c, const exec_cancel *parent) {
    atomic_init(&c->requested, 0);
    atomic_init(&c->claimed, 0);
    c->code = CXLA_STATUS_CANCELLED;
    c->reason = "";
    c->parent = parent;
    c->poll = NULL;
    c->poll_user = NULL;
}

void exec_cancel_request(exec_cancel *c, int code, const char *reason) {
    if (!c) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&c->claimed, &expected, 1)) return;
    c->code = code;
    c->reason = reason ? reason : "";
    atomic_store_explicit(&c->requested, 1, memory_order_release);
}

bool exec_cancel_poll(exec_cancel *c) {
    if (c && c->poll && !exec_cancelled(c)) c->poll(c, c->poll_user);
    return exec_cancelled(c);
}

static int64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void deadline_poll(exec_cancel *self, void *user) {
    if (monotonic_ns() > ((const exec_deadline *)user)->until_ns)
        exec_cancel_request(self, CXLA_STATUS_DEADLINE_EXCEEDED,
                            "its time at compile time ran out");
}

void exec_cancel_init_deadline(exec_cancel *c, exec_deadline *d, int64_t ns) {
    exec_cancel_init(c, NULL);
    d->until_ns = monotonic_ns() + ns;
    c->poll = deadline_poll;
    c->poll_user = d;
}

cxla_status exec_cancel_error(const exec_cancel *c, const char *where) {
    /* The run's own request wins over its parents': it says why this device stopped. */
    const exec_cancel *r = c;
    while (r && !atomic_load_explicit(&r->requested, memory_order_acquire)) r = r->parent;
    if (!r) return cxla_error(CXLA_STATUS_INTERNAL, "exec_cancel_error on a run not cancelled");
    return cxla_status_create((cxla_status_code)r->code, __FILE__, __LINE__,
                              "%s%sthe run was cancelled%s%s", where ? where : "",
                              where ? ": " : "", r->reason[0] ? ": " : "", r->reason);
}

/* Set by exec_custom_call_invoke (custom_call.c) around a foreign call. */
static _Thread_local exec_cancel *current_run;

exec_cancel *exec_cancel_current(void) {
    return current_run;
}

exec_cancel *exec_cancel_swap_current(exec_cancel *c) {
    exec_cancel *old = current_run;
    current_run = c;
    return old;
}

cxla_status exec_cancel_error_at(const exec_cancel *c, const cxla_instr *instr) {
    char where[512];
    snprintf(where, sizeof(where), "at %s (%s, computation %s, line %" PRId64 ")", instr->name,
             cxla_opcode_name(instr->opcode), instr->parent ? instr->parent->name : "?",
             instr->line);
    return exec_cancel_error(c, where);
}

cxla_status exec_error(const cxla_instr *instr, cxla_status_code code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_status s = cxla_status_createv(code, __FILE__, __LINE__, format, args);
    va_end(args);
    if (instr->line > 0)
        return cxla_status_annotate(s, "%s (%s, line %" PRId64 ")", instr->name,
                                    cxla_opcode_name(instr->opcode), instr->line);
    return cxla_status_annotate(s, "%s (%s)", instr->name, cxla_opcode_name(instr->opcode));
}

/* Set by the runtime, read by targets on any thread: an atomic pointer. */
static _Atomic(exec_run_devices_fn) run_devices;

void exec_set_run_devices(exec_run_devices_fn fn) {
    atomic_store(&run_devices, fn);
}

cxla_status exec_run_devices(const cxla_module *module, const exec_devices_options *options,
                             const cxla_literal *const *const *args, int64_t arg_count,
                             cxla_literal **out_results) {
    exec_run_devices_fn fn = atomic_load(&run_devices);
    if (!fn)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                          "running a module on several devices needs the runtime: create a "
                          "client (cxla_client_create) first");
    return fn(module, options, args, arg_count, out_results);
}
