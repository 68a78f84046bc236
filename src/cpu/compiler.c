/* The compiler driver and the compile cache (see compiler.h). */
#define _XOPEN_SOURCE 700 /* realpath */

#include "cpu/compiler.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"

struct cpu_library {
    void *handle;
    int from_cache;
};

enum { MAX_ARGS = 64, MAX_PARALLEL = 8 };

/* ---- hashing ---------------------------------------------------------------------- */

/* Two 64-bit hashes with different constants, read as one 128-bit key. A key names a
 * cache entry, so a collision would load the wrong code; 2^-128 is negligible and the
 * inputs are not adversarial (they are this user's own programs). Each lane takes eight
 * bytes a step (the sources of a 1,000-instruction module are megabytes, hashed on every
 * load from the cache: byte by byte FNV-1a was 11% of that load's CPU time); a step is a
 * bijection of the lane for a given word and of the word for a given lane, so inputs that
 * differ in one word never meet. */
typedef struct hash128 {
    uint64_t a, b;
} hash128;

static uint64_t rotl64(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

static void hash_word(hash128 *h, uint64_t w) {
    h->a = rotl64(h->a ^ (w * 0x9e3779b97f4a7c15ull), 29) * 0xbf58476d1ce4e5b9ull;
    h->b = rotl64(h->b + (w * 0xc2b2ae3d27d4eb4full), 31) * 0x94d049bb133111ebull;
}

static void hash_bytes(hash128 *h, const void *data, size_t n) {
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        hash_word(h, w);
    }
    /* The last 0-7 bytes with their count, so that "a" and "a\0" differ. */
    uint64_t w = 0;
    if (n > i) memcpy(&w, p + i, n - i);
    hash_word(h, w ^ ((uint64_t)(n - i) << 59));
}

static void hash_str(hash128 *h, const char *s) {
    size_t n = strlen(s);
    hash_bytes(h, &n, sizeof n); /* lengths too, so that ("ab","c") != ("a","bc") */
    hash_bytes(h, s, n);
}

static uint64_t checksum(const void *data, size_t n) {
    hash128 h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    hash_bytes(&h, data, n);
    return h.a ^ (h.b * 31);
}

/* ---- configuration ---------------------------------------------------------------- */

static const char *compiler_name(void) {
    const char *cc = getenv("CXLA_CC");
    return cc && *cc ? cc : "cc";
}

static const char *compiler_flags(void) {
    const char *f = getenv("CXLA_CFLAGS");
    return f ? f : "-O2 -march=native";
}

/* Flags every object needs, whatever CXLA_CFLAGS says. */
static const char *const fixed_flags = "-fPIC -ffp-contract=off -fno-math-errno";

void cpu_cache_dir(char *buf, size_t size) {
    const char *d = getenv("CXLA_CACHE_DIR");
    if (d && *d) {
        snprintf(buf, size, "%s", d);
        return;
    }
    d = getenv("XDG_CACHE_HOME");
    if (d && *d) {
        snprintf(buf, size, "%s/cxla", d);
        return;
    }
    d = getenv("HOME");
    snprintf(buf, size, "%s/.cache/cxla", d && *d ? d : "/tmp");
}

/* Splits |s| at whitespace into |argv| (pointers into |copy|, a strdup the caller frees);
 * returns the count or -1 when there are too many words. */
static int split_words(const char *s, char **copy, char **argv, int max) {
    *copy = strdup(s);
    if (!*copy) return -1;
    int n = 0;
    for (char *p = *copy; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') *p++ = '\0';
        if (!*p) break;
        if (n == max) return -1;
        argv[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    }
    return n;
}

/* ---- running the compiler --------------------------------------------------------- */

/* Starts |argv| with stdout and stderr into |log_path| (or /dev/null when NULL). Returns
 * the pid, or -1. */
static pid_t spawn(char *const *argv, const char *log_path) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    int fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execvp(argv[0], argv);
    _exit(127);
}

/* Waits for |pid|: its exit status, or -1 when it did not exit normally. */
static int wait_for(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Builds argv: the compiler's words, then |extra| words, then |tail| (NULL-terminated).
 * |copies| collects the strings to free. */
static int build_argv(char **argv, char **copies, const char *const *tail) {
    int n = split_words(compiler_name(), &copies[0], argv, MAX_ARGS / 2);
    if (n <= 0) return -1;
    int m = split_words(compiler_flags(), &copies[1], argv + n, MAX_ARGS / 4);
    if (m < 0) return -1;
    n += m;
    m = split_words(fixed_flags, &copies[2], argv + n, 8);
    if (m < 0) return -1;
    n += m;
    for (int i = 0; tail[i]; i++) {
        if (n >= MAX_ARGS - 1) return -1;
        argv[n++] = (char *)tail[i];
    }
    argv[n] = NULL;
    return n;
}

static pthread_mutex_t identity_lock = PTHREAD_MUTEX_INITIALIZER;
static char *identity_key;  /* the compiler's name and stamp the identity is of */
static char *identity_text; /* its `--version` output */
static char *failed_cc;     /* the last CXLA_CC whose `--version` failed (for the probe) */

static cxla_status no_compiler(const char *cc) {
    return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                      "cpu backend: cannot run the C compiler '%s' (`%s --version` failed); "
                      "set CXLA_CC to a C compiler such as gcc or clang, or install one "
                      "(the Debian package build-essential)",
                      cc, cc);
}

/* ---- the compiler's identity ------------------------------------------------------ *
 *
 * An object's cache key holds the compiler's `--version` output, but running the compiler
 * costs a process (about 1-2 ms, more on a loaded machine) in every process that only loads
 * cached objects. So the output is kept on disk too, in the cache directory as
 * cc-STAMPHASH.id, where the stamp names the compiler's files as they are now: each word of
 * CXLA_CC that is a file (the first one looked up in PATH as execvp does, symlinks followed
 * to the real file: /usr/bin/cc -> gcc-12) with its size, modification and change times,
 * inode and device, and for a small file (a wrapper script) a checksum of its bytes.
 * Installing another compiler or upgrading it changes the stamp, so the next process asks
 * `--version` again. What the stamp does not see: a wrapper script that stays the same but
 * runs another compiler (chosen by an environment variable, say); such a setup clears the
 * cache (`cxla cache clear`) when its compiler changes. */

/* Files of at most this many bytes are stamped by their bytes too (compiler_stamp). */
enum { STAMP_BYTES_MAX = 64 * 1024 };

/* The file |word| runs or names (PATH searched when it has no '/'), resolved, into |out|
 * (PATH_MAX bytes); false when there is none. */
static bool resolve_word(const char *word, char *out) {
    if (strchr(word, '/')) return realpath(word, out) != NULL;
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin"; /* execvp's default */
    char cand[4096];
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        /* An empty entry is the current directory. */
        int len = n ? snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, word)
                    : snprintf(cand, sizeof cand, "%s", word);
        struct stat st;
        if (len > 0 && (size_t)len < sizeof cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
            access(cand, X_OK) == 0)
            return realpath(cand, out) != NULL;
        if (!colon) return false;
        p = colon + 1;
    }
}

/* The stamp of compiler |cc| (see above) into |out|; false when its first word is no file
 * (the compiler then does not run, and `--version` says so). */
static bool compiler_stamp(const char *cc, cxla_strbuf *out) {
    char *copy = NULL, *argv[MAX_ARGS];
    int n = split_words(cc, &copy, argv, MAX_ARGS);
    bool ok = n > 0;
    char *real = ok ? malloc(PATH_MAX) : NULL;
    ok = ok && real;
    cxla_strbuf_printf(out, "%s\n", cc);
    for (int i = 0; ok && i < n; i++) {
        struct stat st;
        if (argv[i][0] == '-') continue; /* a flag */
        if (!resolve_word(argv[i], real) || stat(real, &st) != 0) {
            ok = i > 0; /* a later word may be an argument that is no file */
            continue;
        }
        cxla_strbuf_printf(
            out, "%s %lld %lld.%09ld %lld.%09ld %llu %llu", real, (long long)st.st_size,
            (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
            (long)st.st_ctim.tv_nsec, (unsigned long long)st.st_ino, (unsigned long long)st.st_dev);
        /* A small file (a wrapper script) by its bytes too: edited in place within one
         * tick of the file system's clock, its size and times may not change. */
        char *bytes = NULL;
        size_t len = 0;
        cxla_status s = st.st_size <= STAMP_BYTES_MAX ? cxla_read_file(real, &bytes, &len) : NULL;
        if (!s && bytes) cxla_strbuf_printf(out, " %016" PRIx64, checksum(bytes, len));
        if (s) ok = false; /* unread (out of memory): no stamp rather than a weaker one */
        cxla_status_free(s);
        free(bytes);
        cxla_strbuf_putc(out, '\n');
    }
    free(real);
    free(copy);
    return ok && !out->failed;
}

/* The path of the identity file of |stamp| into |buf|. */
static void identity_path(const char *stamp, char *buf, size_t size) {
    hash128 h = {0xcbf29ce484222325ull, 0x6c62272e07bb0142ull};
    hash_str(&h, "cxla compiler identity v1");
    hash_str(&h, stamp);
    char dir[2048];
    cpu_cache_dir(dir, sizeof dir);
    snprintf(buf, size, "%s/cc-%016" PRIx64 "%016" PRIx64 ".id", dir, h.a, h.b);
}

/* Runs `|cc| --version`: its output into *out (the caller frees it), or no_compiler. */
static cxla_status run_version(const char *cc, char **out) {
    char log[] = "/tmp/cxla-cc-version-XXXXXX";
    int fd = mkstemp(log);
    if (fd < 0) return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot create a temporary file");
    close(fd);
    char *copy = NULL, *argv[MAX_ARGS];
    int n = split_words(cc, &copy, argv, MAX_ARGS - 2);
    int rc = -1;
    if (n > 0) {
        argv[n] = "--version";
        argv[n + 1] = NULL;
        pid_t pid = spawn(argv, log);
        rc = pid < 0 ? -1 : wait_for(pid);
    }
    free(copy);
    char *text = NULL;
    size_t len = 0;
    cxla_status s = rc == 0 ? cxla_read_file(log, &text, &len) : NULL;
    unlink(log);
    if (rc != 0 || s) {
        cxla_status_free(s);
        free(text);
        return no_compiler(cc);
    }
    *out = text;
    return NULL;
}

static bool make_dirs(const char *path);
static bool write_atomic(const char path[2200], const void *data, size_t n);

/* The compiler's identity (`cc --version`): remembered per process and compiler stamp,
 * and on disk (see above), so that a process that loads its objects from the cache runs
 * no compiler at all. */
static cxla_status compiler_identity(char **out) {
    const char *cc = compiler_name();
    cxla_strbuf stamp;
    cxla_strbuf_init(&stamp);
    bool stamped = compiler_stamp(cc, &stamp);
    /* Without a stamp the name alone keys the process's memory (as before the stamps). */
    const char *key = stamped ? stamp.data : cc;
    pthread_mutex_lock(&identity_lock);
    if (identity_key && strcmp(identity_key, key) == 0) {
        *out = strdup(identity_text);
        pthread_mutex_unlock(&identity_lock);
        cxla_strbuf_free(&stamp);
        return *out ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    pthread_mutex_unlock(&identity_lock);
    char path[2300];
    char *text = NULL;
    size_t len = 0;
    cxla_status s = NULL;
    bool from_disk = false;
    if (stamped) {
        identity_path(stamp.data, path, sizeof path);
        s = cxla_read_file(path, &text, &len);
        from_disk = !s && len > 0 && memchr(text, '\0', len) == NULL;
        cxla_status_free(s);
        s = NULL;
        if (!from_disk) {
            free(text);
            text = NULL;
        }
    }
    if (!from_disk) {
        s = run_version(cc, &text);
        if (s) {
            cxla_strbuf_free(&stamp);
            return s;
        }
        /* Kept on disk only when the compiler did not change while it ran. */
        cxla_strbuf again;
        cxla_strbuf_init(&again);
        char dir[2048];
        cpu_cache_dir(dir, sizeof dir);
        if (stamped && compiler_stamp(cc, &again) && strcmp(again.data, stamp.data) == 0 &&
            make_dirs(dir))
            write_atomic(path, text, strlen(text));
        cxla_strbuf_free(&again);
    }
    /* Remembered only whole: a key without its text would be read as NULL next time. */
    char *key_copy = strdup(key), *text_copy = strdup(text);
    pthread_mutex_lock(&identity_lock);
    if (key_copy && text_copy) {
        free(identity_key);
        free(identity_text);
        identity_key = key_copy;
        identity_text = text_copy;
        key_copy = text_copy = NULL;
    }
    pthread_mutex_unlock(&identity_lock);
    free(key_copy);
    free(text_copy);
    cxla_strbuf_free(&stamp);
    *out = text;
    return NULL;
}

cxla_status cpu_compiler_probe(char *out_version, size_t size) {
    if (out_version && size) out_version[0] = '\0';
    const char *cc = compiler_name();
    pthread_mutex_lock(&identity_lock);
    bool failed_before = failed_cc && strcmp(failed_cc, cc) == 0;
    pthread_mutex_unlock(&identity_lock);
    if (failed_before) return no_compiler(cc);
    char *text = NULL;
    cxla_status s = compiler_identity(&text);
    if (s) {
        /* Remembered only when the compiler did not run (not for out of memory). */
        if (cxla_status_code_of(s) == CXLA_STATUS_FAILED_PRECONDITION) {
            char *copy = strdup(cc);
            pthread_mutex_lock(&identity_lock);
            if (copy) {
                free(failed_cc);
                failed_cc = copy;
            }
            pthread_mutex_unlock(&identity_lock);
        }
        return s;
    }
    if (out_version && size) {
        size_t n = strcspn(text, "\r\n");
        if (n >= size) n = size - 1;
        memcpy(out_version, text, n);
        out_version[n] = '\0';
    }
    free(text);
    return NULL;
}

/* ---- files ------------------------------------------------------------------------ */

/* mkdir -p; true when |path| is a directory at the end. */
static bool make_dirs(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
            buf[i] = c;
        }
    }
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Removes the files of directory |dir| (not recursive) and the directory. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Writes |data| to |path| through a temporary name in the same directory and a rename. */
static bool write_atomic(const char path[2200], const void *data, size_t n) {
    char tmp[2300];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    cxla_status s = cxla_write_file(tmp, data, n);
    if (s) {
        cxla_status_free(s);
        unlink(tmp);
        return false;
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return false;
    }
    return true;
}

/* Loads cache entry |so| if it is present, matches |sum| and loads; removes it when it is
 * present but corrupt. NULL when there is no usable entry. */
static void *load_entry(const char *so, const char *sum) {
    char *bytes = NULL, *want = NULL;
    size_t n = 0, wn = 0;
    cxla_status s = cxla_read_file(so, &bytes, &n);
    if (s) {
        cxla_status_free(s); /* no entry */
        return NULL;
    }
    void *handle = NULL;
    s = cxla_read_file(sum, &want, &wn);
    char got[32];
    snprintf(got, sizeof got, "%016" PRIx64, checksum(bytes, n));
    if (!s && wn >= 16 && memcmp(want, got, 16) == 0) handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    cxla_status_free(s);
    free(bytes);
    free(want);
    if (!handle) {
        /* Corrupt (truncated, overwritten, checksum mismatch, unloadable): rebuild. */
        unlink(so);
        unlink(sum);
    }
    return handle;
}

/* The first lines of the compiler's messages in |log| (at most |max| bytes). */
static void first_lines(const char *log, cxla_strbuf *out, size_t max) {
    char *text = NULL;
    size_t n = 0;
    cxla_status s = cxla_read_file(log, &text, &n);
    if (s) {
        cxla_status_free(s);
        return;
    }
    int lines = 0;
    size_t i = 0;
    while (i < n && i < max && lines < 8) {
        if (text[i] == '\n') lines++;
        i++;
    }
    cxla_strbuf_append(out, text, i);
    free(text);
}

/* ---- compile ---------------------------------------------------------------------- */

static bool warned_unwritable;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

static void warn_unwritable(const char *dir) {
    pthread_mutex_lock(&warn_lock);
    bool first = !warned_unwritable;
    warned_unwritable = true;
    pthread_mutex_unlock(&warn_lock);
    if (first)
        fprintf(stderr,
                "cxla: warning: the compile cache %s is not writable; compiling in a temporary "
                "directory (set CXLA_CACHE_DIR to a writable directory to keep compiled code)\n",
                dir);
}

/* Compiles the sources in |work| into |work|/out.so. */
static cxla_status compile_in(const char work[2200], const char *const *sources,
                              const size_t *lengths, int64_t count, const char *what) {
    char path[2300], obj[2300], log[2300];
    for (int64_t i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/tu%" PRId64 ".c", work, i);
        cxla_status s = cxla_write_file(path, sources[i], lengths[i]);
        if (s) return cxla_status_annotate(s, "cpu backend: writing the generated C of %s", what);
    }
    /* Compile MAX_PARALLEL translation units at a time. */
    for (int64_t first = 0; first < count; first += MAX_PARALLEL) {
        int64_t last = first + MAX_PARALLEL < count ? first + MAX_PARALLEL : count;
        pid_t pids[MAX_PARALLEL];
        for (int64_t i = first; i < last; i++) {
            char src[2300];
            snprintf(src, sizeof src, "%s/tu%" PRId64 ".c", work, i);
            snprintf(obj, sizeof obj, "%s/tu%" PRId64 ".o", work, i);
            snprintf(log, sizeof log, "%s/tu%" PRId64 ".log", work, i);
            const char *tail[] = {"-c", src, "-o", obj, NULL};
            char *argv[MAX_ARGS], *copies[3] = {NULL, NULL, NULL};
            int n = build_argv(argv, copies, tail);
            pids[i - first] = n < 0 ? -1 : spawn(argv, log);
            for (int k = 0; k < 3; k++) free(copies[k]);
        }
        int64_t failed = -1;
        for (int64_t i = first; i < last; i++) {
            int rc = pids[i - first] < 0 ? -1 : wait_for(pids[i - first]);
            if (rc != 0 && failed < 0) failed = i;
        }
        if (failed >= 0) {
            cxla_strbuf msg;
            cxla_strbuf_init(&msg);
            snprintf(log, sizeof log, "%s/tu%" PRId64 ".log", work, failed);
            first_lines(log, &msg, 2000);
            cxla_status s = cxla_error(CXLA_STATUS_INTERNAL,
                                       "cpu backend: the generated C of %s failed to compile "
                                       "(a bug in cxla); the source is kept in %s/tu%" PRId64
                                       ".c; the compiler said:\n%s",
                                       what, work, failed, msg.data ? msg.data : "");
            cxla_strbuf_free(&msg);
            return s;
        }
    }
    /* Link. */
    char out_so[2300];
    snprintf(out_so, sizeof out_so, "%s/out.so", work);
    snprintf(log, sizeof log, "%s/link.log", work);
    const char *tail[MAX_ARGS];
    int t = 0;
    tail[t++] = "-shared";
    tail[t++] = "-o";
    tail[t++] = out_so;
    char *objs[MAX_ARGS];
    int64_t nobj = count < MAX_ARGS - 10 ? count : 0;
    for (int64_t i = 0; i < nobj; i++) {
        snprintf(obj, sizeof obj, "%s/tu%" PRId64 ".o", work, i);
        objs[i] = strdup(obj);
        tail[t++] = objs[i];
    }
    /* libm explicitly: an unversioned reference resolved at dlopen time would bind to the
     * oldest symbol versions (log@GLIBC_2.2.5, whose error wrapper gives +NaN where the
     * interpreter's log gives the hardware's -NaN). */
    tail[t++] = "-lm";
    tail[t] = NULL;
    if (nobj != count)
        return cxla_error(CXLA_STATUS_INTERNAL,
                          "cpu backend: %s has %" PRId64 " translation units, more than the %d "
                          "one link takes (a bug in cxla)",
                          what, count, MAX_ARGS - 11);
    char *argv[MAX_ARGS], *copies[3] = {NULL, NULL, NULL};
    int n = build_argv(argv, copies, tail);
    int rc = n < 0 ? -1 : wait_for(spawn(argv, log));
    for (int k = 0; k < 3; k++) free(copies[k]);
    for (int64_t i = 0; i < nobj; i++) free(objs[i]);
    if (rc != 0) {
        cxla_strbuf msg;
        cxla_strbuf_init(&msg);
        first_lines(log, &msg, 2000);
        cxla_status s = cxla_error(CXLA_STATUS_INTERNAL,
                                   "cpu backend: linking the generated code of %s failed (%" PRId64
                                   " translation units in %s):\n%s",
                                   what, count, work, msg.data ? msg.data : "");
        cxla_strbuf_free(&msg);
        return s;
    }
    return NULL;
}

cxla_status cpu_library_compile(const char *const *sources, const size_t *lengths, int64_t count,
                                const char *what, cpu_library **out) {
    *out = NULL;
    if (count < 1)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cpu backend: nothing to compile for %s",
                          what);
    char *identity = NULL;
    CXLA_RETURN_IF_ERROR(compiler_identity(&identity));
    hash128 h = {0xcbf29ce484222325ull, 0x6c62272e07bb0142ull};
    hash_str(&h, "cxla cpu object v2");
    hash_str(&h, compiler_name());
    hash_str(&h, identity);
    hash_str(&h, compiler_flags());
    hash_str(&h, fixed_flags);
    for (int64_t i = 0; i < count; i++) {
        hash_bytes(&h, &lengths[i], sizeof lengths[i]);
        hash_bytes(&h, sources[i], lengths[i]);
    }
    free(identity);
    char dir[2048], so[2200], sum[2200], work[2200];
    cpu_cache_dir(dir, sizeof dir);
    snprintf(so, sizeof so, "%s/%016" PRIx64 "%016" PRIx64 ".so", dir, h.a, h.b);
    snprintf(sum, sizeof sum, "%s/%016" PRIx64 "%016" PRIx64 ".sum", dir, h.a, h.b);

    cpu_library *lib = calloc(1, sizeof *lib);
    if (!lib) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    lib->handle = load_entry(so, sum);
    if (lib->handle) {
        lib->from_cache = 1;
        *out = lib;
        return NULL;
    }
    /* Build in a fresh directory inside the cache (the rename into place then stays on
     * one file system), or in the temporary directory when the cache is not writable. */
    bool cached = make_dirs(dir);
    if (cached) {
        snprintf(work, sizeof work, "%s/build-XXXXXX", dir);
        cached = mkdtemp(work) != NULL;
    }
    if (!cached) {
        warn_unwritable(dir);
        const char *tmp = getenv("TMPDIR");
        snprintf(work, sizeof work, "%s/cxla-build-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(work)) {
            free(lib);
            return cxla_error(CXLA_STATUS_UNAVAILABLE,
                              "cpu backend: cannot create a build directory for %s in %s or %s",
                              what, dir, work);
        }
    }
    cxla_status s = compile_in(work, sources, lengths, count, what);
    if (s) {
        free(lib);
        return s; /* the build directory stays, with the source the message names */
    }
    char built[2300];
    snprintf(built, sizeof built, "%s/out.so", work);
    const char *load_path = built;
    if (cached) {
        char *bytes = NULL;
        size_t n = 0;
        s = cxla_read_file(built, &bytes, &n);
        if (!s) {
            char text[32];
            int len = snprintf(text, sizeof text, "%016" PRIx64 "\n", checksum(bytes, n));
            /* The checksum first: a reader that finds the new .so finds its sum. */
            if (write_atomic(sum, text, (size_t)len) && rename(built, so) == 0) load_path = so;
        }
        cxla_status_free(s);
        free(bytes);
    }
    lib->handle = dlopen(load_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        const char *err = dlerror();
        s = cxla_error(CXLA_STATUS_UNAVAILABLE, "cpu backend: cannot load the code of %s: %s", what,
                       err ? err : "dlopen failed");
        free(lib);
        remove_dir(work);
        return s;
    }
    remove_dir(work); /* the mapping stays valid after the file goes */
    *out = lib;
    return NULL;
}

void *cpu_library_symbol(cpu_library *lib, const char *name) {
    if (!lib || !lib->handle) return NULL;
    return dlsym(lib->handle, name);
}

void cpu_library_close(cpu_library *lib) {
    if (!lib) return;
    if (lib->handle) dlclose(lib->handle);
    free(lib);
}

int cpu_library_from_cache(const cpu_library *lib) {
    return lib ? lib->from_cache : 0;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

cxla_status cpu_cache_clear(int64_t *out_removed) {
    char dir[4096], path[4400];
    cpu_cache_dir(dir, sizeof dir);
    int64_t removed = 0;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *name = e->d_name;
            snprintf(path, sizeof path, "%s/%s", dir, name);
            if (ends_with(name, ".so") || ends_with(name, ".sum") || strstr(name, ".tmp-") ||
                (strncmp(name, "cc-", 3) == 0 && ends_with(name, ".id"))) {
                if (unlink(path) == 0) removed++;
            } else if (strncmp(name, "build-", 6) == 0) {
                remove_dir(path);
                removed++;
            }
        }
        closedir(d);
    } else if (errno != ENOENT) {
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot read the compile cache %s: %s", dir,
                          strerror(errno));
    }
    if (out_removed) *out_removed = removed;
    return NULL;
}
