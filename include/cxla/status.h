/* cxla/status.h: errors.
 *
 * Every cxla call that can fail returns a cxla_status: NULL means success, anything
 * else is an error object owned by the caller, who must release it with
 * cxla_status_free() (or pass it up). The message names what was wrong and where;
 * the cxla source file and line that raised it are kept apart for debugging.
 */
#ifndef CXLA_STATUS_H_
#define CXLA_STATUS_H_

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cxla_status_code {
    CXLA_STATUS_OK = 0,
    CXLA_STATUS_INVALID_ARGUMENT,    /* bad input: malformed text, wrong shapes */
    CXLA_STATUS_OUT_OF_RANGE,        /* an index or value outside what is allowed */
    CXLA_STATUS_NOT_FOUND,           /* a named thing (file, target, computation) is missing */
    CXLA_STATUS_UNIMPLEMENTED,       /* valid input that cxla does not support */
    CXLA_STATUS_RESOURCE_EXHAUSTED,  /* out of memory, or a size too large to represent */
    CXLA_STATUS_FAILED_PRECONDITION, /* a call made in the wrong state */
    CXLA_STATUS_DATA_LOSS,           /* truncated or corrupt data (e.g. a short .npy file) */
    CXLA_STATUS_DEADLINE_EXCEEDED,   /* a time limit was reached */
    CXLA_STATUS_UNAVAILABLE,         /* an I/O or system failure */
    CXLA_STATUS_INTERNAL,            /* a bug in cxla */
    CXLA_STATUS_CANCELLED,           /* the run was cancelled (cxla_cancel_request, SIGINT) */
    CXLA_STATUS_CODE_COUNT
} cxla_status_code;

typedef struct cxla_status_s *cxla_status;

/* Creates an error with a printf-style message. Never returns NULL: when memory is
 * short it returns a static "out of memory" status (freeing it is a no-op). */
cxla_status cxla_status_create(cxla_status_code code, const char *file, int line,
                               const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The same with a va_list (for functions that take their own format arguments). */
cxla_status cxla_status_createv(cxla_status_code code, const char *file, int line,
                                const char *format, va_list args);

/* The usual way to raise an error: cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "bad %s", x). */
#define cxla_error(code, ...) cxla_status_create((code), __FILE__, __LINE__, __VA_ARGS__)

/* Prefixes |status|'s message with context ("while parsing x.hlo: <message>") and
 * returns it (the same object, which the caller still owns). A NULL status stays NULL. */
cxla_status cxla_status_annotate(cxla_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

cxla_status_code cxla_status_code_of(cxla_status status); /* CXLA_STATUS_OK for NULL */
const char *cxla_status_message(cxla_status status);      /* "" for NULL */
const char *cxla_status_code_name(cxla_status_code code); /* "INVALID_ARGUMENT" ... */
/* The cxla source location that raised the error (for bug reports). */
const char *cxla_status_file(cxla_status status);
int cxla_status_line(cxla_status status);
void cxla_status_destroy(cxla_status status); /* NULL is fine */
/* Deprecated alias of cxla_status_destroy, kept for one release (see docs/c-api.md). */
void cxla_status_free(cxla_status status);

/* Evaluates |expr| (a cxla_status) once and returns it from the calling function when it
 * is an error; the caller of that function then owns it. */
#define CXLA_RETURN_IF_ERROR(expr)                                                                 \
    do {                                                                                           \
        cxla_status cxla_status_tmp_ = (expr);                                                     \
        if (cxla_status_tmp_) return cxla_status_tmp_;                                             \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* CXLA_STATUS_H_ */
