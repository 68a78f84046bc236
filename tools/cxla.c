/* The cxla command-line tool. Each command is a row in the table below; its code lives
 * in cmd_*.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu/onednn.h"
#include "tool.h"

/* oneDNN (Debian's build) runs its parallel regions on GNU OpenMP, whose threads by
 * default spin for about 300,000 rounds at every wait (the join of a region, oneDNN's
 * barriers, the idle team between calls). Next to the cpu backend's own thread pool, and
 * on any machine whose cores are shared, the spinning threads take the cores from the
 * threads they wait for: ResNet-50 ran 5-10x slower on a loaded 2-core machine
 * (docs/performance.md, "OpenMP's waiting"). So the tool asks OpenMP for passive waiting
 * unless the user chose a policy. libgomp reads the environment once, when it is loaded,
 * before main (and libc's start-up resets the environment after a preinit function could
 * change it), so the tool sets the variable and executes itself again, once: the second
 * process finds it set. If that exec fails, it goes on with OpenMP's default. */
static void omp_wait_passive(char **argv) {
    if (!cpu_onednn_available() || getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
    /* The program's own path, so that the new image keeps the name `cxla` (ps, top and
     * pgrep show the name of the file executed: "exe" for /proc/self/exe itself). */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || (size_t)n >= sizeof self - 1) return;
    self[n] = '\0';
    if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
    execv(self, argv);
}

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const tool_command commands[] = {
    {"run", "run an HLO module on inputs and print or save the result",
     "usage: cxla run MODULE [INPUT...] [-o DIR] [--backend NAME] [--seed N] [--repeat N]\n"
     "                [--infeed FILE]... [--outfeed-dir DIR] [--check-finite] [--quiet]\n"
     "                [--replicas N] [--partitions P] [--input-dir DIR]\n"
     "                [--collective-timeout S] [--timeout S] [--mpi]\n"
     "\n"
     "Runs the entry computation of MODULE (HLO text; StableHLO text for .mlir, its public\n"
     "@main or only public function, checks included) on the compiled cpu backend or\n"
     "the reference interpreter, through the runtime API (cxla/runtime.h).\n"
     "\n"
     "INPUT is a .npy file or a literal in text form ('f32[2] {1, 2}'), one per array\n"
     "leaf of the entry parameters, in order (a tuple parameter takes its leaves depth\n"
     "first). With no INPUT, inputs are generated from the seed, deterministically, as\n"
     "XLA's MakeFakeArguments does (indices in range, floats in [-0.1, 0.2]); so\n"
     "are constants whose values were elided from the text ({...}), with a warning.\n"
     "\n"
     "  -o DIR        write each leaf of the result to DIR/out0.npy, out1.npy, ...\n"
     "  --backend B   cpu (compiled) or interpreter (or interp); without it,\n"
     "                $CXLA_BACKEND, else cpu when a C compiler runs ($CXLA_CC, else cc)\n"
     "                and the interpreter otherwise, with one line on stderr that says so\n"
     "                (cxla version names the default and why)\n"
     "  --seed N      seed for generated inputs (default 42)\n"
     "  --repeat N    run N times and print the time of each phase (parse, compile,\n"
     "                inputs, run: median, min, max);\n"
     "                on a terminal a progress line shows the runs as they go (and a\n"
     "                single run says it is running once it has taken a second)\n"
     "  --check-finite  report the first instruction that turns finite values into NaN/Inf\n"
     "  --quiet, -q   print nothing but errors (with -o DIR: only the files); also\n"
     "                silences the line of the fallback to the interpreter\n"
     "  --infeed FILE queue a value (.npy, or literal text) for the module's infeed\n"
     "                instructions; repeat it to queue several, read in order\n"
     "  --outfeed-dir DIR  write what the module outfeeds to DIR/outfeed0.npy,\n"
     "                outfeed1.npy, ... in order (one file per array leaf)\n"
     "\n"
     "Several devices (replicas x partitions), with the collectives between them:\n"
     "  --replicas N  run on N replicas, one thread each (default: the module's\n"
     "                replica_count, else 1)\n"
     "  --partitions P  P partitions per replica (default: the module's num_partitions,\n"
     "                else 1); device d is replica d / P, partition d % P\n"
     "  --input-dir DIR  device inputs from DIR/replica<r>/in<j>.npy (with P > 1:\n"
     "                DIR/replica<r>/partition<p>/in<j>.npy), j counting the parameter\n"
     "                leaves; a device without its folder reads DIR/in<j>.npy. Without\n"
     "                it every device gets the same INPUTs (or generated inputs)\n"
     "  --collective-timeout S  fail a device that waits more than S seconds in one\n"
     "                collective (default 600), naming the devices that did not come;\n"
     "                the run is then cancelled on the others, so it ends with that error\n"
     "  --timeout S   cancel the run when it takes longer than S seconds (exit 1,\n"
     "                naming the instruction it was at); the first Ctrl-C (SIGINT) does\n"
     "                the same, a second one ends cxla at once\n"
     "  --mpi         run as one device of a run across MPI processes:\n"
     "                mpirun -np N cxla run --mpi MODULE ...; the replica count\n"
     "                defaults to N / P (cxla version says whether MPI was built in)\n"
     "With several devices each result is printed under its device's label\n"
     "('replica 1:'), and -o DIR writes DIR/replica<r>/out<j>.npy (P > 1:\n"
     "DIR/replica<r>/partition<p>/out<j>.npy). A device that fails makes the run fail\n"
     "naming it ('replica 2 failed: ...'). --infeed and --outfeed-dir take one device.\n"
     "\n"
     "Custom-call targets are looked up among the program's symbols: load a library of\n"
     "them with LD_PRELOAD=./lib.so.\n"
     "\n"
     "Exit status 0 on success, 1 on any error (message on stderr), unknown options and\n"
     "malformed numbers included; for StableHLO files with checks, 1 when a check fails.",
     cmd_run_checked},
    {"check", "parse and verify a module",
     "usage: cxla check [--strict] [--layout-sensitive] FILE\n"
     "\n"
     "Parses and verifies FILE (HLO text, or StableHLO text when FILE ends in .mlir,\n"
     "converted to HLO). Prints nothing and exits 0 when the module is\n"
     "valid; otherwise prints the error as FILE:LINE:COL: message, with the line and\n"
     "a caret, and exits 1.\n"
     "\n"
     "The verifier checks what XLA's tests check: layouts are not compared and\n"
     "floating-point types may mix precisions (f32 + bf16).\n"
     "  --strict            XLA's HloVerifier defaults: no mixed precision\n"
     "  --layout-sensitive  layouts count (bitcast keeps the byte size)",
     cmd_check},
    {"fmt", "print a module in canonical form",
     "usage: cxla fmt [--style short|long] [--to-proto [-o OUT.pb]] FILE\n"
     "\n"
     "Parses FILE (HLO text, XLA's binary HloModuleProto .pb, or StableHLO converted to\n"
     "HLO for .mlir) and prints it in XLA's canonical text: the short style of XLA's dumps\n"
     "(the default) or the long style of HloModule::ToString ('%' names, shapes).\n"
     "  --to-proto   write a binary HloModuleProto instead (to OUT.pb, or stdout); with\n"
     "               replica_count, num_partitions or another module-config field in the\n"
     "               header, an HloModuleProtoWithConfig",
     cmd_fmt},
    {"graph", "draw a module as a graph (Graphviz DOT, SVG, PNG)",
     "usage: cxla graph MODULE [-o FILE] [--computation NAME]\n"
     "\n"
     "Draws MODULE (HLO text) as a Graphviz graph: one node per instruction (name, opcode,\n"
     "result shape; parameters as ellipses, constants grey with their value when small,\n"
     "the ROOT outlined in red), an edge from each operand to its user (labeled with the\n"
     "operand index when there are several), and each called computation (fusion, while\n"
     "body and condition, branches, call, reducers...) as a cluster entered by a dashed\n"
     "edge from its caller. Reducers of one scalar operation are named in the caller's\n"
     "label instead ('to_apply=add.1 (add)').\n"
     "\n"
     "  -o FILE             write to FILE instead of standard output: DOT text, or, when\n"
     "                      FILE ends in .svg, .png or .pdf, the picture drawn by\n"
     "                      Graphviz's dot program (which must be installed)\n"
     "  --computation NAME  draw computation NAME and what it calls (default: the entry)\n"
     "\n"
     "Render DOT text yourself with 'dot -Tsvg FILE.dot -o FILE.svg'. Graphs of thousands\n"
     "of instructions take Graphviz minutes; draw one computation at a time.\n"
     "\n"
     "Exit status 0 on success, 1 on any error (message on stderr).",
     cmd_graph},
    {"compile", "run the cpu backend's passes on a module, or compile it ahead of time to C",
     "usage: cxla compile MODULE [--dump-after PASS|all] [--emit-hlo] [--emit-c] [--explain]\n"
     "       cxla compile MODULE -o DIR/NAME [--prefix NAME] [--target portable|native]\n"
     "                                   [--blas onednn|none]\n"
     "\n"
     "Runs the cpu backend's pass pipeline on MODULE (HLO text, or StableHLO .mlir) with\n"
     "the verifier between passes, and prints the optimized module as HLO text:\n"
     "async-desugar, builder-calls, inline, topk-decompose, simplify, constant-fold, cse,\n"
     "dce, layout, dot-canon, conv-canon, output-fusion, fusion, dce\n"
     "(docs/passes.md says what each does).\n"
     "\n"
     "  --dump-after PASS  also print the module after each run of pass PASS (or after\n"
     "                     every pass: 'all') on standard error, headed by\n"
     "                     '// after PASS (pipeline cpu, changed|unchanged)'\n"
     "  --emit-hlo         print the optimized HLO (the default)\n"
     "  --emit-c           print the C the cpu backend compiles instead: one function per\n"
     "                     fusion or other instruction with a kernel, each fused\n"
     "                     instruction as a comment\n"
     "  --explain          compile the module with the cpu backend and print how it runs\n"
     "                     each instruction of the computations that run in sequence\n"
     "                     (kernel kNN_name, onednn matmul, step, in place, alias,\n"
     "                     collective, interpreter handler, ...), then a summary line:\n"
     "                     the count of each, the arena's bytes and the copy steps\n"
     "  -o DIR/NAME        compile ahead of time: write DIR/NAME.h and DIR/NAME.c (and\n"
     "                     DIR/NAME_data.c for big constants), C11 that builds with any C\n"
     "                     compiler and runs without cxla: NAME_run(args, results, scratch)\n"
     "                     (docs/aot.md)\n"
     "  --prefix NAME      the prefix of the generated symbols (default: NAME of -o)\n"
     "  --target T         portable (default): no compiler extensions; native: builtins\n"
     "  --blas B           none (default): exact loops; onednn: f32/bf16/f16 dot and\n"
     "                     convolution call oneDNN (link with -ldnnl)\n"
     "\n"
     "Exit status 0 on success, 1 on any error (message on stderr).",
     cmd_compile},
    {"cache", "show or clear the cpu backend's cache of compiled code",
     "usage: cxla cache dir|clear\n"
     "\n"
     "The cpu backend keeps each module's compiled code in a cache keyed by a hash of the\n"
     "generated C, the compiler's identity and the flags, so a module compiles once per\n"
     "machine: $CXLA_CACHE_DIR, else $XDG_CACHE_HOME/cxla, else ~/.cache/cxla.\n"
     "\n"
     "  dir    print the cache's folder\n"
     "  clear  remove every compiled object from it\n"
     "\n"
     "Exit status 0 on success, 1 on any error (message on stderr).",
     cmd_cache},
    {"conformance", "run StableHLO conformance cases (.mlir files with checks)",
     "usage: cxla conformance [-j N] [--timeout SECONDS] [-v] [--backend NAME] [--report FILE]\n"
     "       PATH...\n"
     "\n"
     "Runs every .mlir file under each PATH (directories recursively) as a StableHLO\n"
     "program: its public entry function runs on the default backend (or the one\n"
     "--backend names) and its check\n"
     "operations (check.expect_*, custom_call @check.expect_*) decide the verdict. Each\n"
     "case runs in a child process with a time limit, so a crash or a hang fails that\n"
     "case only. Prints one line per failed case, then 'N passed, M failed, K skipped'\n"
     "(a case is skipped when it needs several devices, checks nothing, or uses the\n"
     "reference interpreter's probes). On a terminal a progress line shows the run.\n"
     "\n"
     "  -j N              run N cases at once (default 1)\n"
     "  --backend NAME    cpu or interpreter (default: as for cxla run)\n"
     "  --timeout S       time limit per case in seconds (default 60)\n"
     "  -v                also print skipped cases with the reason\n"
     "  --report FILE     write 'PASS|FAIL|SKIP path' for every case to FILE\n"
     "\n"
     "'cxla run FILE.mlir' runs one case and prints its result and failed checks; MODULE\n"
     "arguments of run, check, fmt and graph may be StableHLO (.mlir) or binary\n"
     "HloModuleProto (.pb, known by content) too.\n"
     "\n"
     "Exit status 0 when no case failed, 1 otherwise, 2 for a bad command line.",
     cmd_conformance},
    {"help", "show help for cxla or one command",
     "usage: cxla help [COMMAND]\n"
     "\n"
     "With no COMMAND, lists the commands; with one, prints its usage and options\n"
     "('cxla COMMAND --help' does the same). An unknown COMMAND is an error (exit status 2).",
     cmd_help},
    {"version", "print the version, whether MPI and oneDNN are built in, the default backend",
     "usage: cxla version\n"
     "\n"
     "Prints 'cxla VERSION', 'mpi: yes' or 'mpi: no': whether this cxla can run\n"
     "replicas across MPI processes (cxla run --mpi), and 'onednn: yes' or 'onednn: no':\n"
     "whether the cpu backend runs dot and convolution with oneDNN (otherwise with its\n"
     "own loops), and 'backend: NAME (WHY)': the backend of a run that names none\n"
     "($CXLA_BACKEND, else cpu when a C compiler runs, else the interpreter), and why.\n"
     "Exits 1 when CXLA_BACKEND names no backend.",
     cmd_version},
};

static void print_commands(FILE *f) {
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

static void print_usage(FILE *f) {
    fprintf(f, "cxla %s: XLA in C, the array-computation compiler and runtime\n\n",
            CXLA_VERSION_STRING);
    fprintf(f, "usage: cxla COMMAND [ARGS...]\n\ncommands:\n");
    print_commands(f);
    fprintf(f, "\n'cxla help COMMAND' shows a command's options.\n");
}

static const tool_command *find_command(const char *name) {
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

/* Levenshtein distance of two short words (longer ones count as far apart). */
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), row[33];
    if (la > 32 || lb > 32) return 99;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Exit status 2 for a command line cxla cannot make sense of (no or unknown command);
 * a near miss ("chek") gets a "did you mean". */
static int unknown_command(const char *name) {
    const char *closest = NULL;
    size_t best = 3; /* at most two edits away */
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        size_t d = edit_distance(name, commands[i].name);
        if (d < best) best = d, closest = commands[i].name;
    }
    if (closest && best < strlen(closest)) {
        fprintf(stderr, "cxla: unknown command '%s'; did you mean '%s'? (cxla help lists them)\n",
                name, closest);
        return 2;
    }
    fprintf(stderr, "cxla: unknown command '%s'; the commands are:\n", name);
    print_commands(stderr);
    return 2;
}

/* A command's help: its usage, and for run the part that does not fit in one string
 * literal (C99 compilers need take only 4095 characters). */
static void print_command_usage(const tool_command *c) {
    printf("%s\n", c->usage);
    if (strcmp(c->name, "run") == 0) printf("%s", cmd_run_usage_more);
}

static int cmd_help(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stdout);
        return 0;
    }
    if (argc > 2) {
        fprintf(stderr, "usage: cxla help [COMMAND]\n");
        return 2;
    }
    const tool_command *c = find_command(argv[1]);
    if (!c) return unknown_command(argv[1]);
    print_command_usage(c);
    return 0;
}

static int cmd_version(int argc, char **argv) {
    printf("cxla %s\n", CXLA_VERSION_STRING);
    /* Whether `cxla run --mpi` (and cxla_executable_execute_mpi) can work. */
    printf("mpi: %s\n", cxla_mpi_available() ? "yes" : "no");
    /* Whether the cpu backend's dot and convolution use oneDNN. */
    printf("onednn: %s\n", cpu_onednn_available() ? "yes" : "no");
    /* The backend of a run that names none, and why (docs/runtime.md, "The backend"). */
    const char *name = NULL;
    char why[512];
    cxla_status s = cxla_default_backend(&name, why, sizeof why);
    if (s) return tool_fail(s);
    printf("backend: %s (%s)\n", name, why);
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

cxla_status tool_with_position(cxla_status s, const char *path, const char *text, size_t size) {
    const char *msg = cxla_status_message(s);
    size_t plen = strlen(path);
    bool prefixed = strncmp(msg, path, plen) == 0 && msg[plen] == ':';
    if (prefixed && (!(msg[plen + 1] >= '0' && msg[plen + 1] <= '9') || strchr(msg, '\n')))
        return s; /* named its file already, or has its source line (HLO parse errors) */
    if (prefixed) msg += plen + 1;
    long long line = 0, col = 0;
    int n = 0;
    if (sscanf(msg, "%lld:%lld: %n", &line, &col, &n) < 2 || n == 0 || line < 1 || col < 1)
        return prefixed ? s : cxla_status_annotate(s, "%s", path);
    size_t q = 0;
    for (long long l = 1; l < line && q < size; q++)
        if (text[q] == '\n') l++;
    size_t e = q;
    while (e < size && text[e] != '\n' && text[e] != '\r') e++;
    char *caret = malloc((size_t)col + 1);
    if (!caret) return prefixed ? s : cxla_status_annotate(s, "%s", path);
    for (long long i = 0; i < col - 1; i++)
        caret[i] = q + (size_t)i < e && text[q + (size_t)i] == '\t' ? '\t' : ' ';
    caret[col - 1] = '^';
    caret[col] = 0;
    cxla_status r = cxla_error(cxla_status_code_of(s), "%s:%s\n    %.*s\n    %s", path, msg,
                               (int)(e - q), text + q, caret);
    free(caret);
    cxla_status_free(s);
    return r;
}

cxla_status tool_load_module_with(const char *path, bool quiet,
                                  const cxla_hlo_verify_options *options,
                                  cxla_module **out_module) {
    char *text;
    size_t size;
    CXLA_RETURN_IF_ERROR(cxla_read_file(path, &text, &size));
    cxla_module *m = NULL;
    cxla_status s = tool_parse_text(text, size, path, &m);
    if (!s) {
        /* The verifier names the instruction and its line:column; add the file. */
        s = cxla_hlo_verify_with_options(m, options);
        if (s) s = tool_with_position(s, path, text, size);
    }
    free(text);
    if (s) {
        cxla_module_destroy(m);
        return s;
    }
    if (!quiet && m->warnings.len) fprintf(stderr, "%s", m->warnings.data);
    *out_module = m;
    return NULL;
}

cxla_status tool_load_module(const char *path, bool quiet, cxla_module **out_module) {
    return tool_load_module_with(path, quiet, NULL, out_module);
}

int main(int argc, char **argv) {
    omp_wait_passive(argv);
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) return cmd_version(argc - 1, argv + 1);
    const tool_command *c = find_command(argv[1]);
    if (!c) return unknown_command(argv[1]);
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        print_command_usage(c);
        return 0;
    }
    int rc = c->run(argc - 1, argv + 1);
    /* Every write is checked: output lost to a full disk or a closed standard output
     * (`cxla run m.hlo > /dev/full`) is a failure, not a success. */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cxla %s: writing to standard output failed%s%s\n", argv[1],
                errno ? ": " : "", errno ? strerror(errno) : "");
        return 1;
    }
    return rc;
}
