/* The bytes the library holds for values (memcount.h): literals' array data
 * and the cpu backend's run arenas and scratchpads, with a high-water mark. A count the
 * library keeps rather than the process's resident set, so that it does not depend on
 * the C library's allocator (what it caches, when it returns pages) and a test can
 * compare it with a program's live set. Two relaxed atomic additions per counted block;
 * the high-water mark is raised by compare-and-swap only when passed. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/memcount.h"

static atomic_size_t held, peak;
static atomic_size_t limit; /* 0: none (cxla_mem_set_limit, CXLA_MEM_LIMIT) */
static pthread_once_t limit_once = PTHREAD_ONCE_INIT;

/* CXLA_MEM_LIMIT=BYTES (a suffix K, M or G multiplies by 1024's powers): the limit from
 * the first counted allocation on, unless cxla_mem_set_limit sets one. */
static void read_limit(void) {
    const char *e = getenv("CXLA_MEM_LIMIT");
    if (!e || !*e) return;
    char *end = NULL;
    unsigned long long v = strtoull(e, &end, 10);
    switch (end ? *end : 0) {
    case 'K':
    case 'k': v <<= 10; break;
    case 'M':
    case 'm': v <<= 20; break;
    case 'G':
    case 'g': v <<= 30; break;
    default: break;
    }
    size_t none = 0;
    atomic_compare_exchange_strong(&limit, &none, (size_t)v);
}

bool cxla_mem_take(size_t bytes) {
    if (!bytes) return true;
    pthread_once(&limit_once, read_limit);
    size_t cap = atomic_load_explicit(&limit, memory_order_relaxed);
    size_t now = atomic_fetch_add_explicit(&held, bytes, memory_order_relaxed) + bytes;
    if (cap && now > cap) {
        atomic_fetch_sub_explicit(&held, bytes, memory_order_relaxed);
        return false;
    }
    size_t top = atomic_load_explicit(&peak, memory_order_relaxed);
    while (now > top && !atomic_compare_exchange_weak_explicit(
                            &peak, &top, now, memory_order_relaxed, memory_order_relaxed)) {
    }
    return true;
}

void cxla_mem_give(size_t bytes) {
    if (bytes) atomic_fetch_sub_explicit(&held, bytes, memory_order_relaxed);
}

size_t cxla_mem_held(void) {
    return atomic_load_explicit(&held, memory_order_relaxed);
}

size_t cxla_mem_peak(void) {
    return atomic_load_explicit(&peak, memory_order_relaxed);
}

void cxla_mem_peak_reset(void) {
    atomic_store_explicit(&peak, atomic_load_explicit(&held, memory_order_relaxed),
                          memory_order_relaxed);
}

void cxla_mem_set_limit(size_t bytes) {
    pthread_once(&limit_once, read_limit);
    atomic_store_explicit(&limit, bytes, memory_order_relaxed);
}
