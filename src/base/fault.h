/* Allocation-failure injection, SQLite's way of proving that every error path frees what
 * it took: in a build with -DCXLA_FAULT_INJECTION=ON (on by default with
 * CXLA_SANITIZE) every source of the library is compiled with this header forced in
 * first (-include), so that malloc, calloc, realloc, strdup and strndup go through the
 * counters below; a test arms the n-th allocation to fail and checks that the library
 * returns a status, leaks nothing and does not crash (tests/base/test_fault.c).
 *
 * Only <stddef.h> is included here: the header comes before each file's own feature
 * macros (_POSIX_C_SOURCE), which system headers must see first. The macros rename the
 * libc declarations that follow into these functions' (same types), so the sources need
 * no change. In other builds the functions exist but count nothing
 * (cxla_fault_available() is false). */
#ifndef CXLA_BASE_FAULT_H_
#define CXLA_BASE_FAULT_H_

#include <stddef.h>

void *cxla_fault_malloc(size_t size);
void *cxla_fault_calloc(size_t count, size_t size);
void *cxla_fault_realloc(void *ptr, size_t size);
char *cxla_fault_strdup(const char *s);
char *cxla_fault_strndup(const char *s, size_t n);

/* Whether this build routes allocations through the counters. */
int cxla_fault_available(void);
/* From now on the |n|-th allocation (n >= 1) fails, and when |persistent| every one
 * after it too; n = 0 disarms. Resets the count and the fired flag. Thread-safe. */
void cxla_fault_arm(long long n, int persistent);
/* Allocations since the last cxla_fault_arm, and whether one was made to fail. */
long long cxla_fault_count(void);
int cxla_fault_fired(void);

#if defined(CXLA_FAULT_INJECTION)
#define malloc(size)        cxla_fault_malloc(size)
#define calloc(count, size) cxla_fault_calloc(count, size)
#define realloc(ptr, size)  cxla_fault_realloc(ptr, size)
#define strdup(s)           cxla_fault_strdup(s)
#define strndup(s, n)       cxla_fault_strndup(s, n)
#endif

#endif /* CXLA_BASE_FAULT_H_ */
