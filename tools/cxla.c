/* The cxla command-line tool. Each command is a row in the table below; its code lives
 * in cmd_*.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const tool_command commands[] = {
    {"run", "run an HLO module on inputs and print or save the result",
     "usage: cxla run MODULE [INPUT...] [-o DIR] [--backend NAME] [--seed N] [--repeat N]\n"
     "                [--infeed FILE]... [--outfeed-dir DIR] [--check-finite]\n"
     "\n"
     "Runs the entry computation of MODULE (HLO text) on the reference interpreter,\n"
     "through the runtime API (cxla/runtime.h).\n"
     "\n"
     "INPUT is a .npy file or a literal in text form ('f32[2] {1, 2}'), one per array\n"
     "leaf of the entry parameters, in order (a tuple parameter takes its leaves depth\n"
     "first). With no INPUT, inputs are generated from the seed, deterministically; so\n"
     "are constants whose values were elided from the text ({...}), with a warning.\n"
     "\n"
     "  -o DIR        write each leaf of the result to DIR/out0.npy, out1.npy, ...\n"
     "  --backend B   interpreter (or interp: the default and, for now, the only one)\n"
     "  --seed N      seed for generated inputs (default 42)\n"
     "  --repeat N    run N times and print the time of each phase (median, min, max)\n"
     "  --check-finite  report the first instruction that turns finite values into NaN/Inf\n"
     "  --infeed FILE queue a value (.npy, or literal text) for the module's infeed\n"
     "                instructions; repeat it to queue several, read in order\n"
     "  --outfeed-dir DIR  write what the module outfeeds to DIR/outfeed0.npy,\n"
     "                outfeed1.npy, ... in order (one file per array leaf)\n"
     "\n"
     "Custom-call targets are looked up among the program's symbols: load a library of\n"
     "them with LD_PRELOAD=./lib.so.\n"
     "\n"
     "Exit status 0 on success, 1 on any error (message on stderr).",
     cmd_run},
    {"check", "parse and verify a module",
     "usage: cxla check FILE\n"
     "\n"
     "Parses and verifies FILE (HLO text). Prints nothing and exits 0 when the module is\n"
     "valid; otherwise prints the error (with line and column) and exits 1.",
     cmd_check},
    {"fmt", "print a module in canonical form",
     "usage: cxla fmt [--style short|long] FILE\n"
     "\n"
     "Parses FILE and prints it in XLA's canonical text: the short style of XLA's dumps\n"
     "(the default) or the long style of HloModule::ToString ('%' names, shapes).",
     cmd_fmt},
    {"help", "show help for cxla or one command", "usage: cxla help [COMMAND]", cmd_help},
    {"version", "print the version", "usage: cxla version", cmd_version},
};

static void print_usage(FILE *f) {
    fprintf(f, "cxla %s: XLA in C, the array-computation compiler and runtime\n\n",
            CXLA_VERSION_STRING);
    fprintf(f, "usage: cxla COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'cxla help COMMAND' shows a command's options.\n");
}

static const tool_command *find_command(const char *name) {
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static int cmd_help(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stdout);
        return 0;
    }
    const tool_command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "cxla: unknown command '%s' (try 'cxla help')\n", argv[1]);
        return 1;
    }
    printf("%s\n", c->usage);
    return 0;
}

static int cmd_version(int argc, char **argv) {
    printf("cxla %s\n", CXLA_VERSION_STRING);
    return 0;
}

int tool_fail(cxla_status status) {
    fprintf(stderr, "cxla: %s\n", cxla_status_message(status));
    cxla_status_free(status);
    return 1;
}

double tool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

cxla_status tool_load_module(const char *path, bool quiet, cxla_module **out_module) {
    char *text;
    size_t size;
    CXLA_RETURN_IF_ERROR(cxla_read_file(path, &text, &size));
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, size, path, &m);
    free(text);
    if (!s) s = cxla_verify_module(m);
    if (s) {
        cxla_module_destroy(m);
        return s;
    }
    if (!quiet && m->warnings.len) fprintf(stderr, "%s", m->warnings.data);
    *out_module = m;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return 1;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) return cmd_version(argc - 1, argv + 1);
    const tool_command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "cxla: unknown command '%s' (try 'cxla --help')\n", argv[1]);
        return 1;
    }
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        printf("%s\n", c->usage);
        return 0;
    }
    return c->run(argc - 1, argv + 1);
}
