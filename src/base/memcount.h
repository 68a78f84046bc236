/* Memory held (src/base/memcount.c): the bytes of literals' array data and of the cpu
 * backend's run arenas and oneDNN work blocks alive now, and the most alive at once since
 * the last cxla_mem_peak_reset (which sets it to what is held now). Thread-safe and
 * process-wide. cxla_mem_take counts |bytes| taken; it returns false, counting nothing,
 * when that would pass the limit (0, the default: none; cxla_mem_set_limit, or the
 * environment variable CXLA_MEM_LIMIT=BYTES with an optional K, M or G), so that a run can
 * be capped and a test can make an allocation of a given size fail: the caller then
 * reports out of memory as if the allocator had. cxla_mem_give counts them given back. */
#ifndef CXLA_BASE_MEMCOUNT_H_
#define CXLA_BASE_MEMCOUNT_H_

#include <stdbool.h>
#include <stddef.h>

bool cxla_mem_take(size_t bytes);
void cxla_mem_give(size_t bytes);
size_t cxla_mem_held(void);
size_t cxla_mem_peak(void);
void cxla_mem_peak_reset(void);
void cxla_mem_set_limit(size_t bytes);

#endif /* CXLA_BASE_MEMCOUNT_H_ */
