/* Shared pieces of the cxla command-line tool. */
#ifndef CXLA_TOOLS_TOOL_H_
#define CXLA_TOOLS_TOOL_H_

#include <stdbool.h>
#include <stdio.h>

#include "cxla/cxla.h"
#include "hlo/hlo.h"

typedef struct tool_command {
    const char *name;
    const char *summary;
    const char *usage; /* the full help text */
    int (*run)(int argc, char **argv);
} tool_command;

int cmd_check(int argc, char **argv);
int cmd_fmt(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* cxla run, and for a StableHLO file the verdict of its checks (cmd_conformance.c). */
int cmd_run_checked(int argc, char **argv);
int cmd_conformance(int argc, char **argv);

/* Prints "cxla: <message>" to stderr, frees |status|, returns 1. */
int tool_fail(cxla_status status);
/* Reads, parses and verifies a module file. Warnings go to stderr unless |quiet|. */
cxla_status tool_load_module(const char *path, bool quiet, cxla_module **out_module);
/* The same with the verifier's options (NULL: those of cxla_hlo_verify). */
cxla_status tool_load_module_with(const char *path, bool quiet,
                                  const cxla_hlo_verify_options *options, cxla_module **out_module);
/* Parses module text: StableHLO MLIR when |path| ends with .mlir, else HLO text. */
cxla_status tool_parse_text(const char *text, size_t size, const char *path,
                            cxla_module **out_module);
/* Monotonic time in seconds. */
double tool_now(void);

#endif /* CXLA_TOOLS_TOOL_H_ */
