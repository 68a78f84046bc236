/* The terminal progress line (progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

enum { LINE_MAX_WIDTH = 79 }; /* fits an 80-column terminal without wrapping */

static void draw(tool_progress *p, int64_t done, const char *detail) {
    char line[LINE_MAX_WIDTH + 1];
    double elapsed = tool_now() - p->start;
    int n;
    if (p->total > 0) {
        int pct = (int)(100 * done / p->total);
        n = snprintf(line, sizeof(line), "%s %" PRId64 "/%" PRId64 " (%d%%)  %.1f s", p->label,
                     done, p->total, pct, elapsed);
        if (done > 0 && done < p->total) {
            double left = elapsed / (double)done * (double)(p->total - done);
            if (n > 0 && n < (int)sizeof(line))
                n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.1f s left", left);
        }
    } else {
        n = snprintf(line, sizeof(line), "%s %" PRId64 "  %.1f s", p->label, done, elapsed);
    }
    if (detail && n > 0 && n < (int)sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, "  %s", detail);
    if (n < 0) return;
    if (n >= (int)sizeof(line)) n = (int)sizeof(line) - 1; /* cut to the width */
    /* Pad over what is left of a longer previous line. */
    fprintf(p->stream, "\r%s%*s", line, p->width > n ? p->width - n : 0, "");
    if (p->width > n) fprintf(p->stream, "\r%s", line);
    fflush(p->stream);
    p->width = n;
    p->last_draw = tool_now();
}

void tool_progress_start(tool_progress *p, const char *label, int64_t total) {
    memset(p, 0, sizeof(*p));
    p->stream = isatty(fileno(stderr)) ? stderr : NULL;
    p->label = label;
    p->total = total > 0 ? total : 0;
    p->start = tool_now();
    if (p->stream) draw(p, 0, NULL);
}

void tool_progress_update(tool_progress *p, int64_t done, const char *detail) {
    if (!p->stream) return;
    bool last = p->total > 0 && done >= p->total;
    if (!last && tool_now() - p->last_draw < 0.1) return;
    draw(p, done, detail);
}

void tool_progress_finish(tool_progress *p) {
    if (!p->stream) return;
    fprintf(p->stream, "\r%*s\r", p->width, "");
    fflush(p->stream);
    p->stream = NULL;
    p->width = 0;
}
