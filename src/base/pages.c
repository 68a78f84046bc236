/* Transparent huge pages for big buffers. Where the kernel gives them only on request
 * (/sys/kernel/mm/transparent_hugepage/enabled = madvise, as on many distributions), a
 * stream over a buffer of 4 KiB pages misses the TLB every page: on a 2-core Zen 4 VM a
 * sum of 64 Mi f32 on one thread took 11.1-12.2 ms on 4 KiB pages and 8.8-9.2 ms on
 * 2 MiB ones (docs/performance.md, "Huge pages"). Asking costs one system call per big
 * allocation and changes no value; where the kernel already gives them to every mapping
 * (always) or never does, the request is harmless. */
#define _DEFAULT_SOURCE
#include <stdint.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "base/base.h"

enum { HUGE_PAGE = 2 << 20, HUGE_MIN = 4 << 20 };

void cxla_advise_huge_pages(void *p, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || size < HUGE_MIN) return;
    uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE_PAGE - 1);
    /* Only the whole 2 MiB pages inside the block: its edges may share a page with other
     * blocks. A failure (an old kernel, a sanitizer's allocator) leaves small pages. */
    if (end > start) (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}
