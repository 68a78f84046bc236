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
