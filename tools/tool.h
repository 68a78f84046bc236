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
/* The rest of cxla run's help, printed after its usage (cmd_run.c). */
extern const char *const cmd_run_usage_more;
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
/* Parses module text: StableHLO MLIR when |path| ends with .mlir, else HLO text. A
 * StableHLO error with a position gets the source line and a caret (tool_with_position). */
cxla_status tool_parse_text(const char *text, size_t size, const char *path,
                            cxla_module **out_module);
/* An error "LINE:COL: msg" (the verifier's) or "PATH:LINE:COL: msg" on one line (the
 * StableHLO front end's) as "PATH:LINE:COL: msg", the source line of |text| and a caret
 * under the column. Takes |s|; other errors come back as they are. */
cxla_status tool_with_position(cxla_status s, const char *path, const char *text, size_t size);
/* Monotonic time in seconds. */
double tool_now(void);

#endif /* CXLA_TOOLS_TOOL_H_ */
