/* A progress line on the terminal for long runs (cxla run --repeat and single runs past a
 * second, cxla conformance).
 *
 * Drawn on stderr only when stderr is a terminal, rewritten in place with '\r' at most
 * ten times a second, and erased by tool_progress_finish, so what follows starts on a
 * clean line. When stderr is not a terminal (a pipe, a file, a CI log) every call does
 * nothing. */
#ifndef CXLA_TOOLS_PROGRESS_H_
#define CXLA_TOOLS_PROGRESS_H_

#include <pthread.h>
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

/* For one long step that reports nothing while it runs (a single cxla run): once it has
 * taken |delay| seconds, a thread draws "label  N.N s" and redraws it every 0.2 s until
 * tool_ticker_stop, which erases it. Nothing happens when stderr is not a terminal, and
 * a step shorter than |delay| draws nothing at all. */
typedef struct tool_ticker {
    tool_progress line;
    double delay;
    bool started, done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
} tool_ticker;

void tool_ticker_start(tool_ticker *t, const char *label, double delay);
void tool_ticker_stop(tool_ticker *t);

#endif /* CXLA_TOOLS_PROGRESS_H_ */
