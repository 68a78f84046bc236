/* The compiler driver of the cpu backend: C sources -> one shared object, loaded.
 *
 * The sources (translation units written by the emitter, src/cpu/emit.h) are compiled by
 * the system C compiler, several at once, linked into one shared object and loaded with
 * dlopen (RTLD_LOCAL). The compiler is `cc`, or $CXLA_CC; the optimization flags are
 * "-O2 -march=native", or $CXLA_CFLAGS; "-fPIC -ffp-contract=off -fno-math-errno" are
 * always added (fused multiply-adds would change results against the interpreter; errno is
 * never read).
 *
 * Objects are cached on disk, keyed by a 128-bit hash of the sources, the compiler's
 * identity (its `--version` output) and the flags: a hit loads without running the
 * compiler, not even for its identity, which is kept in the cache too (cc-STAMP.id, STAMP a
 * hash of the compiler's resolved files with their sizes, times and inodes, and the bytes
 * of small ones such as wrapper scripts: a changed compiler is asked again). The cache
 * directory is $CXLA_CACHE_DIR, else $XDG_CACHE_HOME/cxla, else ~/.cache/cxla. Each entry
 * is KEY.so with KEY.sum (a checksum of the .so); both are written under temporary names
 * and renamed, so concurrent processes never see half an entry. An entry that fails to load or to
 * match its checksum is removed and rebuilt. An unwritable cache directory is not an error: the
 * object is built in a temporary directory (one warning on stderr per process).
 *
 * Errors: FAILED_PRECONDITION when the compiler cannot be run (the message names CXLA_CC
 * and the Debian package build-essential); INTERNAL when the generated code does not
 * compile (the message names |what|, the kept source's path and the compiler's first
 * error lines); UNAVAILABLE for system failures (fork, dlopen of a fresh object). */
#ifndef CXLA_CPU_COMPILER_H_
#define CXLA_CPU_COMPILER_H_

#include <stddef.h>
#include <stdint.h>

#include "cxla/status.h"

typedef struct cpu_library cpu_library;

/* Compiles |count| translation units (|sources|[i] of |lengths|[i] bytes) into one shared
 * object and loads it, or loads it from the cache. |what| names the module in messages.
 * The caller owns |*out| (cpu_library_close). */
cxla_status cpu_library_compile(const char *const *sources, const size_t *lengths, int64_t count,
                                const char *what, cpu_library **out);
/* The address of symbol |name| in |lib|, or NULL. */
void *cpu_library_symbol(cpu_library *lib, const char *name);
/* Unloads |lib| (NULL is fine). */
void cpu_library_close(cpu_library *lib);
/* Whether the last cpu_library_compile that returned |lib| found it in the cache. */
int cpu_library_from_cache(const cpu_library *lib);
/* The compiler probe: whether the C compiler ($CXLA_CC, else cc) runs, by asking it for
 * `--version` once per process and compiler (or reading the answer kept in the cache for
 * the compiler's files as they are); a failure is remembered too, so asking again is cheap
 * (the runtime asks it to choose the default backend). It does not compile
 * anything: a compiler that runs but cannot build (no libc headers) passes the probe and
 * fails in cpu_library_compile. NULL when the compiler runs, with the first line of its
 * `--version` output in |out_version| (may be NULL; |size| bytes, NUL-terminated);
 * otherwise the FAILED_PRECONDITION that cpu_library_compile gives, naming CXLA_CC and the
 * Debian package build-essential. */
cxla_status cpu_compiler_probe(char *out_version, size_t size);
/* The cache directory (for `cxla cache clear` and messages), NUL-terminated in |buf|. */
void cpu_cache_dir(char *buf, size_t size);
/* Removes every entry (KEY.so, KEY.sum, cc-STAMP.id, leftover temporaries) from the cache
 * directory;
 * |out_removed| (may be NULL) gets the number of files removed. A missing directory is
 * an empty cache. */
cxla_status cpu_cache_clear(int64_t *out_removed);

#endif /* CXLA_CPU_COMPILER_H_ */
