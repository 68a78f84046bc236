/* The backends built into the library (exec.h's interface), found by name. */
#include <stdio.h>
#include <string.h>

#include "cpu/cpu.h"
#include "interp/interp.h"
#include "runtime/runtime_internal.h"

const exec_backend *const runtime_backends[] = {
    &interp_backend,
    &cpu_backend,
};
const int runtime_backend_count = (int)(sizeof(runtime_backends) / sizeof(runtime_backends[0]));

const exec_backend *runtime_backend_find(const char *name) {
    for (int i = 0; i < runtime_backend_count; i++) {
        const exec_backend *b = runtime_backends[i];
        if (strcmp(name, b->name) == 0 || (b->alias && strcmp(name, b->alias) == 0)) return b;
    }
    return NULL;
}

const char *runtime_backend_names(void) {
    static char names[256];
    static int ready;
    if (!ready) { /* the list is constant: the same text every time */
        size_t n = 0;
        for (int i = 0; i < runtime_backend_count && n < sizeof(names); i++)
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
                                  runtime_backends[i]->name);
        ready = 1;
    }
    return names;
}
