/* A progress line on the terminal for long runs (cxla run --repeat; later conformance).
 *
 * Drawn on stderr only when stderr is a terminal, rewritten in place with '\r' at most
 * ten times a second, and erased by tool_progress_finish, so what follows starts on a
 * clean line. When stderr is not a terminal (a pipe, a file, a CI log) every call does
 * nothing. */
#ifndef CXLA_TOOLS_PROGRESS_H_
#define CXLA_TOOLS_PROGRESS_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tool_progress {
    FILE *stream;      /* NULL when disabled */
    const char *label; /* "run", "conformance" ...: not copied */
    int64_t total;     /* 0 when unknown */
    double start, last_draw;
    int width; /* characters of the line on screen, to erase */
} tool_progress;

/* Starts a progress line for |total| steps (0: unknown) and draws "label 0/total". */
void tool_progress_start(tool_progress *p, const char *label, int64_t total);
/* Redraws the line with |done| steps finished and an optional |detail| (may be NULL),
 * unless the last redraw was less than 0.1 s ago (the final step is always drawn). */
void tool_progress_update(tool_progress *p, int64_t done, const char *detail);
/* Erases the line. */
void tool_progress_finish(tool_progress *p);

#endif /* CXLA_TOOLS_PROGRESS_H_ */
