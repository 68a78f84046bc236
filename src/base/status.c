/* Status objects: NULL is success, anything else an error with a code and message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cxla/status.h"

struct cxla_status_s {
    cxla_status_code code;
    const char *file;
    int line;
    char *message;
};

/* Returned when there is not even memory for a status. Freeing it is a no-op. */
static struct cxla_status_s out_of_memory_status = {CXLA_STATUS_RESOURCE_EXHAUSTED, __FILE__,
                                                    __LINE__, "out of memory"};

static const char *const code_names[CXLA_STATUS_CODE_COUNT] = {
    [CXLA_STATUS_OK] = "OK",
    [CXLA_STATUS_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
    [CXLA_STATUS_OUT_OF_RANGE] = "OUT_OF_RANGE",
    [CXLA_STATUS_NOT_FOUND] = "NOT_FOUND",
    [CXLA_STATUS_UNIMPLEMENTED] = "UNIMPLEMENTED",
    [CXLA_STATUS_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
    [CXLA_STATUS_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
    [CXLA_STATUS_DATA_LOSS] = "DATA_LOSS",
    [CXLA_STATUS_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED",
    [CXLA_STATUS_UNAVAILABLE] = "UNAVAILABLE",
    [CXLA_STATUS_INTERNAL] = "INTERNAL",
    [CXLA_STATUS_CANCELLED] = "CANCELLED",
};

static char *vformat(const char *format, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    vsnprintf(s, (size_t)n + 1, format, args);
    return s;
}

cxla_status cxla_status_createv(cxla_status_code code, const char *file, int line,
                                const char *format, va_list args) {
    cxla_status s = malloc(sizeof(*s));
    if (!s) return &out_of_memory_status;
    s->code = code == CXLA_STATUS_OK ? CXLA_STATUS_INTERNAL : code;
    s->file = file;
    s->line = line;
    s->message = vformat(format, args);
    if (!s->message) {
        free(s);
        return &out_of_memory_status;
    }
    return s;
}

cxla_status cxla_status_create(cxla_status_code code, const char *file, int line,
                               const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_status s = cxla_status_createv(code, file, line, format, args);
    va_end(args);
    return s;
}

cxla_status cxla_status_annotate(cxla_status status, const char *format, ...) {
    if (!status || status == &out_of_memory_status) return status;
    va_list args;
    va_start(args, format);
    char *prefix = vformat(format, args);
    va_end(args);
    if (!prefix) return status;
    size_t a = strlen(prefix), b = strlen(status->message);
    /* A message that starts with a position "LINE:COL: " continues a file name as
     * "FILE:LINE:COL: ", the one error format of the project. */
    const char *m = status->message;
    size_t i = 0;
    while (m[i] >= '0' && m[i] <= '9') i++;
    bool position = i > 0 && m[i] == ':';
    if (position) {
        size_t j = ++i;
        while (m[i] >= '0' && m[i] <= '9') i++;
        position = i > j && m[i] == ':';
    }
    char *joined = malloc(a + 2 + b + 1);
    if (joined) {
        memcpy(joined, prefix, a);
        memcpy(joined + a, position ? ":" : ": ", position ? 1 : 2);
        memcpy(joined + a + (position ? 1 : 2), status->message, b + 1);
        free(status->message);
        status->message = joined;
    }
    free(prefix);
    return status;
}

cxla_status_code cxla_status_code_of(cxla_status status) {
    return status ? status->code : CXLA_STATUS_OK;
}

const char *cxla_status_message(cxla_status status) {
    return status ? status->message : "";
}

const char *cxla_status_code_name(cxla_status_code code) {
    if ((int)code < 0 || code >= CXLA_STATUS_CODE_COUNT) return "UNKNOWN";
    return code_names[code];
}

const char *cxla_status_file(cxla_status status) {
    return status ? status->file : "";
}
int cxla_status_line(cxla_status status) {
    return status ? status->line : 0;
}

void cxla_status_destroy(cxla_status status) {
    cxla_status_free(status);
}

void cxla_status_free(cxla_status status) {
    if (!status || status == &out_of_memory_status) return;
    free(status->message);
    free(status);
}

void cxla_assert_fail(const char *expr, const char *file, int line) {
    fprintf(stderr, "cxla: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
    abort();
}
