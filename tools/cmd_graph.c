/* cxla graph: draw a module as a Graphviz graph (DOT text, or SVG/PNG/PDF through
 * Graphviz's `dot` program when it is installed). The drawing is cxla_hlo_graph
 * (src/hlo/graph.c); this file handles the command line and the `dot` process. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"

extern char **environ;

/* Above this many nodes, rendering with dot takes long enough to deserve a note. */
enum { MANY_NODES = 500 };

static const char *const rendered_formats[] = {"svg", "png", "pdf"};

/* The Graphviz output format for |path| ("svg" ...), or NULL to write DOT text. */
static const char *rendered_format(const char *path) {
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/')) return NULL;
    for (size_t i = 0; i < sizeof(rendered_formats) / sizeof(rendered_formats[0]); i++)
        if (strcmp(dot + 1, rendered_formats[i]) == 0) return rendered_formats[i];
    return NULL;
}

/* Looks for an executable |name| in the directories of $PATH; |out| gets its path. */
static bool find_on_path(const char *name, char *out, size_t size) {
    const char *path = getenv("PATH");
    if (!path || !*path) return false;
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        /* An empty entry means the current directory. */
        int n = len ? snprintf(out, size, "%.*s/%s", (int)len, path, name)
                    : snprintf(out, size, "./%s", name);
        if (n > 0 && (size_t)n < size && access(out, X_OK) == 0) return true;
        if (!end) break;
        path = end + 1;
    }
    return false;
}

/* Writes all of |data| to |fd|; false on a failed write (EPIPE when dot quit early). */
static bool write_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* Runs `dot -T<format> -o <path>` with |dot_text| on its standard input. */
static cxla_status render(const char *dot_text, size_t len, const char *format, const char *path) {
    char dot[4096];
    if (!find_on_path("dot", dot, sizeof(dot)))
        return cxla_error(CXLA_STATUS_UNAVAILABLE,
                          "cannot write '%s': Graphviz is not installed (no 'dot' program on "
                          "PATH); install it (apt-get install graphviz), or write DOT text "
                          "with -o FILE.dot and render it elsewhere",
                          path);
    int fds[2];
    if (pipe(fds) != 0)
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot create a pipe: %s", strerror(errno));
    char type[16];
    snprintf(type, sizeof(type), "-T%s", format);
    char *argv[] = {"dot", type, "-o", (char *)path, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid;
    int err = posix_spawn(&pid, dot, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[0]);
    if (err != 0) {
        close(fds[1]);
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot run '%s': %s", dot, strerror(err));
    }
    /* dot may quit before reading everything (a bad output path): a write then fails
     * with EPIPE instead of killing us, and dot's exit status tells what happened. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    bool written = write_all(fds[1], dot_text, len);
    close(fds[1]);
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return cxla_error(CXLA_STATUS_UNAVAILABLE, "waiting for dot: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && written) return NULL;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return cxla_error(CXLA_STATUS_UNAVAILABLE,
                          "Graphviz's dot failed (exit status %d) writing '%s'",
                          WEXITSTATUS(status), path);
    if (WIFSIGNALED(status))
        return cxla_error(CXLA_STATUS_UNAVAILABLE,
                          "Graphviz's dot was killed (signal %d) writing '%s'", WTERMSIG(status),
                          path);
    return cxla_error(CXLA_STATUS_UNAVAILABLE, "Graphviz's dot stopped reading the graph for '%s'",
                      path);
}

int cmd_graph(int argc, char **argv) {
    const char *module_path = NULL, *out_path = NULL;
    cxla_hlo_graph_options options = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--computation") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "cxla graph: %s needs a value\n", a);
                return 1;
            }
            if (a[1] == 'o')
                out_path = argv[++i];
            else
                options.computation = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "cxla graph: unknown option '%s' (see 'cxla help graph')\n", a);
            return 1;
        } else if (!module_path) {
            module_path = a;
        } else {
            fprintf(stderr, "cxla graph: one module at a time ('%s' and '%s')\n", module_path, a);
            return 1;
        }
    }
    if (!module_path) {
        fprintf(stderr, "usage: cxla graph MODULE [-o FILE] [--computation NAME]\n");
        return 1;
    }
    cxla_module *m;
    cxla_status s = tool_load_module(module_path, true, &m);
    if (s) return tool_fail(s);
    cxla_strbuf dot;
    cxla_strbuf_init(&dot);
    int64_t nodes = 0;
    s = cxla_hlo_graph(m, &options, &dot, &nodes);
    cxla_module_destroy(m);
    const char *format = out_path ? rendered_format(out_path) : NULL;
    const char *ext = out_path ? strrchr(out_path, '.') : NULL;
    if (!s && !format && ext && !strchr(ext, '/') && strcmp(ext, ".dot") != 0 &&
        strcmp(ext, ".gv") != 0)
        /* Not DOT text in a file whose name promises an image. */
        s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                       "cannot write '%s': unknown extension '%s'; use .dot or .gv for DOT "
                       "text, or .svg, .png or .pdf for a picture drawn by Graphviz",
                       out_path, ext);
    if (!s && format) {
        if (nodes > MANY_NODES)
            fprintf(stderr,
                    "cxla graph: %lld nodes; Graphviz may take a while (--computation NAME "
                    "draws one part)\n",
                    (long long)nodes);
        s = render(dot.data, dot.len, format, out_path);
    } else if (!s && out_path) {
        s = cxla_write_file(out_path, dot.data, dot.len);
    } else if (!s) {
        if (fwrite(dot.data, 1, dot.len, stdout) != dot.len || fflush(stdout) != 0)
            s = cxla_error(CXLA_STATUS_UNAVAILABLE, "error writing the graph to standard output");
    }
    cxla_strbuf_free(&dot);
    if (s) return tool_fail(s);
    return 0;
}
