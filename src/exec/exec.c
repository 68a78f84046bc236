/* Services shared by every backend (exec.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "exec/exec.h"

void exec_device_name(int64_t partition_count, int64_t device, char *buf, size_t size) {
    if (partition_count > 1)
        snprintf(buf, size, "replica %" PRId64 " partition %" PRId64, device / partition_count,
                 device % partition_count);
    else
        snprintf(buf, size, "replica %" PRId64, device);
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
