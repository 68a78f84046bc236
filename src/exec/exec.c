/* Services shared by every backend (exec.h). */
#include <inttypes.h>
#include <stdio.h>

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

cxla_status exec_cancel_error(const exec_cancel *c, const char *where) {
    /* The run's own request wins over the parent's: it says why this device stopped. */
    const exec_cancel *r = c;
    if (r && !atomic_load_explicit(&r->requested, memory_order_acquire) && r->parent) r = r->parent;
    if (!r || !atomic_load_explicit(&r->requested, memory_order_acquire))
        return cxla_error(CXLA_STATUS_INTERNAL, "exec_cancel_error on a run not cancelled");
    return cxla_status_create((cxla_status_code)r->code, __FILE__, __LINE__,
                              "%s%sthe run was cancelled%s%s", where ? where : "",
                              where ? ": " : "", r->reason[0] ? ": " : "", r->reason);
}
