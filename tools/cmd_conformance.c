/* StableHLO in the tool: loading .mlir files (tool_parse_text), `cxla run FILE.mlir`
 * with checks (cmd_run_checked) and `cxla conformance PATH...` (every case in a child
 * process with a time limit, several at once). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cxla/runtime.h"
#include "cxla/stablehlo.h"
#include "progress.h"
#include "tool.h"

cxla_status tool_parse_text(const char *text, size_t size, const char *path,
                            cxla_module **out_module) {
    /* A binary HloModuleProto is known by its content whatever its name (a module
     * named "#..." would otherwise look like MLIR). */
    if (cxla_hlo_looks_like_proto(text, size))
        return cxla_hlo_parse_proto(text, size, path, out_module);
    /* A StableHLO file under another name (.hlo, .txt) is known by its content. */
    if (cxla_stablehlo_is_mlir_path(path) || cxla_stablehlo_looks_like_mlir(text, size)) {
        cxla_stablehlo_info info;
        cxla_status s = cxla_stablehlo_parse(text, size, path, out_module, &info);
        /* Only "PATH:L:C: ..." errors: the same text, source line and caret included. */
        if (s && strncmp(cxla_status_message(s), path, strlen(path)) == 0)
            s = tool_with_position(s, path, text, size);
        return s;
    }
    return cxla_hlo_parse(text, size, path, out_module);
}

/* cxla run FILE.mlir: the run, then the checks' verdict. */
int cmd_run_checked(int argc, char **argv) {
    const char *mlir = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            /* options with a value */
            if (strcmp(argv[i], "--check-finite") != 0) i++;
            continue;
        }
        if (cxla_stablehlo_is_mlir_path(argv[i])) mlir = argv[i];
        break;
    }
    cxla_stablehlo_checks_reset();
    int rc = cmd_run(argc, argv);
    if (!mlir) return rc;
    cxla_stablehlo_check_tally t;
    cxla_stablehlo_checks_get(&t);
    if (t.passed + t.failed > 0) {
        if (t.failures) fprintf(stderr, "%s", t.failures);
        fprintf(stderr, "cxla: %" PRId64 " check(s) passed, %" PRId64 " failed\n", t.passed,
                t.failed);
    }
    free(t.failures);
    if (rc == 0 && t.failed > 0) rc = 1;
    return rc;
}

/* ---- one case ---------------------------------------------------------------------------- */

enum { CASE_PASS = 0, CASE_FAIL = 1, CASE_SKIP = 77 };

/* Runs one case in this (child) process; writes a one-line reason to |fd|. */
/* The backend that runs the cases (--backend); NULL: the client's default. */
static const char *case_backend;

static int run_case(const char *path, int fd) {
    char msg[2048];
    msg[0] = 0;
    int verdict = CASE_FAIL;
    char *text = NULL;
    size_t size = 0;
    cxla_module *m = NULL;
    cxla_client *client = NULL;
    cxla_executable *exe = NULL;
    cxla_literal *result = NULL;
    cxla_stablehlo_info info;
    memset(&info, 0, sizeof info);
    cxla_status s = cxla_read_file(path, &text, &size);
    if (!s) s = cxla_stablehlo_parse(text, size, path, &m, &info);
    if (info.skip_reason) {
        snprintf(msg, sizeof msg, "%s", info.skip_reason);
        verdict = CASE_SKIP;
        goto done;
    }
    if (!s && info.check_count == 0) {
        snprintf(msg, sizeof msg, "the program checks nothing");
        verdict = CASE_SKIP;
        goto done;
    }
    cxla_client_options copts;
    cxla_client_options_init(&copts);
    copts.backend = case_backend;
    if (!s) s = cxla_client_create(&copts, &client);
    if (!s) {
        s = cxla_client_compile(client, m, &exe);
        m = NULL;
    }
    if (!s && cxla_executable_parameter_count(exe) != 0) {
        snprintf(msg, sizeof msg, "the entry function takes arguments");
        verdict = CASE_SKIP;
        goto done;
    }
    cxla_stablehlo_checks_reset();
    if (!s) s = cxla_executable_run(exe, NULL, 0, &result);
    if (s) {
        snprintf(msg, sizeof msg, "%s", cxla_status_message(s));
        goto done;
    }
    cxla_stablehlo_check_tally t;
    cxla_stablehlo_checks_get(&t);
    if (t.failed) {
        snprintf(msg, sizeof msg, "%" PRId64 " of %" PRId64 " checks failed: %s", t.failed,
                 t.failed + t.passed, t.failures ? t.failures : "");
    } else if (t.passed == 0) {
        snprintf(msg, sizeof msg, "no check ran");
    } else {
        verdict = CASE_PASS;
    }
    free(t.failures);
done:
    /* One line. */
    for (char *q = msg; *q; q++)
        if (*q == '\n') *q = q[1] ? ' ' : 0;
    if (write(fd, msg, strlen(msg)) < 0) verdict = CASE_FAIL;
    cxla_status_free(s);
    cxla_literal_free(result);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    cxla_module_destroy(m);
    free(text);
    return verdict;
}

/* ---- collecting cases ------------------------------------------------------------------- */

typedef struct case_list {
    char **paths;
    int64_t count, cap;
} case_list;

static bool push_case(case_list *l, const char *p) {
    if (l->count == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 64;
        char **q = realloc(l->paths, sizeof(char *) * (size_t)cap);
        if (!q) return false;
        l->paths = q;
        l->cap = cap;
    }
    l->paths[l->count] = strdup(p);
    return l->paths[l->count++] != NULL;
}

static void collect(case_list *l, const char *path, int depth) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "cxla conformance: cannot read '%s': %s\n", path, strerror(errno));
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        push_case(l, path);
        return;
    }
    if (depth > 32) return;
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t n = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(n);
        if (!child) break;
        snprintf(child, n, "%s/%s", path, e->d_name);
        struct stat cs;
        if (stat(child, &cs) == 0 && (S_ISDIR(cs.st_mode) || cxla_stablehlo_is_mlir_path(child)))
            collect(l, child, depth + 1);
        free(child);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- the command --------------------------------------------------------------------------- */

typedef struct running {
    pid_t pid;
    int fd;
    int64_t index;
    double start;
    bool killed;
    char buf[2048];
    size_t len;
} running;

static void drain(running *r) {
    for (;;) {
        if (r->len >= sizeof r->buf - 1) {
            char tmp[256];
            if (read(r->fd, tmp, sizeof tmp) <= 0) return;
            continue;
        }
        ssize_t k = read(r->fd, r->buf + r->len, sizeof r->buf - 1 - r->len);
        if (k <= 0) return;
        r->len += (size_t)k;
    }
}

int cmd_conformance(int argc, char **argv) {
    int jobs = 1;
    double limit = 60;
    bool verbose = false;
    const char *report = NULL;
    case_list cases = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-j") == 0 && i + 1 < argc) {
            jobs = atoi(argv[++i]);
        } else if (strncmp(a, "-j", 2) == 0 && a[2]) {
            jobs = atoi(a + 2);
        } else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            limit = atof(argv[++i]);
        } else if (strcmp(a, "--report") == 0 && i + 1 < argc) {
            report = argv[++i];
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = true;
        } else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            case_backend = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "usage: cxla conformance [-j N] [--timeout SECONDS] [-v] "
                            "[--backend NAME] [--report FILE] PATH...\n");
            return 2;
        } else {
            collect(&cases, a, 0);
        }
    }
    if (jobs < 1) jobs = 1;
    if (limit <= 0) limit = 60;
    {
        /* The backend is chosen here, once, before the cases' processes are forked: an
         * unknown name (--backend or CXLA_BACKEND) fails once, not in every case, and the
         * children inherit the compiler probe's answer and the fallback notice's "said". */
        cxla_client_options copts;
        cxla_client_options_init(&copts);
        copts.backend = case_backend;
        cxla_client *client = NULL;
        cxla_status s = cxla_client_create(&copts, &client);
        if (s) {
            fprintf(stderr, "cxla conformance: %s\n", cxla_status_message(s));
            cxla_status_free(s);
            free(cases.paths);
            return 2;
        }
        cxla_client_destroy(client);
    }
    if (cases.count == 0) {
        fprintf(stderr, "cxla conformance: no .mlir cases found\n");
        free(cases.paths);
        return 2;
    }
    qsort(cases.paths, (size_t)cases.count, sizeof(char *), cmp_str);
    int *verdicts = calloc((size_t)cases.count, sizeof(int));
    char **reasons = calloc((size_t)cases.count, sizeof(char *));
    running *slots = calloc((size_t)jobs, sizeof(running));
    if (!verdicts || !reasons || !slots) {
        fprintf(stderr, "cxla conformance: out of memory\n");
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    tool_progress progress;
    tool_progress_start(&progress, "conformance", cases.count);
    int64_t next = 0, done = 0, passed = 0, failed = 0, skipped = 0;
    int active = 0;
    while (done < cases.count) {
        /* Start cases while slots are free. */
        for (int k = 0; k < jobs && next < cases.count; k++) {
            if (slots[k].pid) continue;
            int fds[2];
            if (pipe(fds) != 0) break;
            pid_t pid = fork();
            if (pid < 0) {
                close(fds[0]);
                close(fds[1]);
                break;
            }
            if (pid == 0) {
                close(fds[0]);
                alarm((unsigned)(limit + 5)); /* a backstop if the parent goes away */
                int v = run_case(cases.paths[next], fds[1]);
                close(fds[1]);
                _exit(v);
            }
            close(fds[1]);
            memset(&slots[k], 0, sizeof slots[k]);
            slots[k].pid = pid;
            slots[k].fd = fds[0];
            slots[k].index = next++;
            slots[k].start = tool_now();
            active++;
        }
        /* Reap. */
        bool any = false;
        for (int k = 0; k < jobs; k++) {
            running *r = &slots[k];
            if (!r->pid) continue;
            drain(r);
            int status;
            pid_t w = waitpid(r->pid, &status, WNOHANG);
            if (w == 0) {
                if (!r->killed && tool_now() - r->start > limit) {
                    kill(r->pid, SIGKILL);
                    r->killed = true;
                }
                continue;
            }
            drain(r);
            close(r->fd);
            r->buf[r->len] = 0;
            int v = CASE_FAIL;
            char why[2300];
            if (r->killed) {
                snprintf(why, sizeof why, "timed out after %.0f s", limit);
            } else if (WIFSIGNALED(status)) {
                snprintf(why, sizeof why, "crashed (signal %d)%s%s", WTERMSIG(status),
                         r->len ? ": " : "", r->buf);
            } else {
                v = WEXITSTATUS(status);
                if (v != CASE_PASS && v != CASE_SKIP) v = CASE_FAIL;
                snprintf(why, sizeof why, "%s", r->buf);
            }
            verdicts[r->index] = v;
            reasons[r->index] = strdup(why);
            if (v == CASE_PASS) {
                passed++;
            } else if (v == CASE_SKIP) {
                skipped++;
            } else {
                failed++;
            }
            if (v == CASE_FAIL || (verbose && v == CASE_SKIP)) {
                tool_progress_finish(&progress);
                printf("%s %s: %s\n", v == CASE_FAIL ? "FAIL" : "SKIP", cases.paths[r->index], why);
                fflush(stdout);
            }
            r->pid = 0;
            active--;
            done++;
            any = true;
            tool_progress_update(&progress, done, cases.paths[r->index]);
        }
        if (!any && active > 0) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    tool_progress_finish(&progress);
    if (report) {
        FILE *f = fopen(report, "w");
        if (!f) {
            fprintf(stderr, "cxla conformance: cannot write '%s': %s\n", report, strerror(errno));
        } else {
            for (int64_t i = 0; i < cases.count; i++)
                fprintf(f, "%s %s\n",
                        verdicts[i] == CASE_PASS ? "PASS"
                                                 : (verdicts[i] == CASE_SKIP ? "SKIP" : "FAIL"),
                        cases.paths[i]);
            fclose(f);
        }
    }
    printf("%" PRId64 " passed, %" PRId64 " failed, %" PRId64 " skipped\n", passed, failed,
           skipped);
    for (int64_t i = 0; i < cases.count; i++) {
        free(cases.paths[i]);
        free(reasons[i]);
    }
    free(cases.paths);
    free(reasons);
    free(verdicts);
    free(slots);
    return failed ? 1 : 0;
}
