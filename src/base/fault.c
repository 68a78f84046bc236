/* Allocation-failure injection (fault.h): the counters, and the real allocators behind
 * the macros. */
#include "base/fault.h"
#undef malloc
#undef calloc
#undef realloc
#undef strdup
#undef strndup

#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <execinfo.h>
#define HAVE_BACKTRACE 1
#endif

static atomic_llong count;    /* allocations since armed */
static atomic_llong fail_at;  /* the allocation that fails (1-based); 0: none */
static atomic_int persistent; /* every allocation from fail_at on fails */
static atomic_int fired;

/* Whether this allocation is to fail. */
static int fail_now(void) {
    long long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (!at) return 0;
    long long k = atomic_fetch_add(&count, 1) + 1;
    if (k == at || (k > at && atomic_load(&persistent))) {
#if defined(HAVE_BACKTRACE)
        /* A debugging aid: where the failing allocation is (CXLA_FAULT_BACKTRACE=1). */
        if (k == at && getenv("CXLA_FAULT_BACKTRACE")) {
            void *frames[32];
            backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
        }
#endif
        atomic_store(&fired, 1);
        return 1;
    }
    return 0;
}

void *cxla_fault_malloc(size_t size) {
    return fail_now() ? NULL : malloc(size);
}

void *cxla_fault_calloc(size_t n, size_t size) {
    return fail_now() ? NULL : calloc(n, size);
}

void *cxla_fault_realloc(void *ptr, size_t size) {
    return fail_now() ? NULL : realloc(ptr, size);
}

char *cxla_fault_strdup(const char *s) {
    return fail_now() ? NULL : strdup(s);
}

char *cxla_fault_strndup(const char *s, size_t n) {
    return fail_now() ? NULL : strndup(s, n);
}

int cxla_fault_available(void) {
#if defined(CXLA_FAULT_INJECTION)
    return 1;
#else
    return 0;
#endif
}

void cxla_fault_arm(long long n, int persist) {
    atomic_store(&fail_at, 0);
    atomic_store(&count, 0);
    atomic_store(&fired, 0);
    atomic_store(&persistent, persist);
    atomic_store(&fail_at, n);
}

long long cxla_fault_count(void) {
    return atomic_load(&count);
}

int cxla_fault_fired(void) {
    return atomic_load(&fired);
}
