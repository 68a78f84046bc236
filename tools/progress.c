/* The terminal progress line (progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
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
    } else if (done < 0) { /* the ticker: time only */
        n = snprintf(line, sizeof(line), "%s  %.1f s", p->label, elapsed);
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

/* ---- the ticker ---------------------------------------------------------------------- */

/* Waits on the ticker's condition until |seconds| from now or until stopped; true when
 * stopped. Called with the mutex held. */
static bool wait_or_stop(tool_ticker *t, double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double whole = (double)(int64_t)seconds;
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((seconds - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (!t->done && rc == 0) rc = pthread_cond_timedwait(&t->cv, &t->mu, &ts);
    return t->done;
}

static void *tick(void *arg) {
    tool_ticker *t = arg;
    pthread_mutex_lock(&t->mu);
    if (t->line.stream || !wait_or_stop(t, t->delay)) {
        t->line.stream = stderr;
        do {
            draw(&t->line, -1, NULL);
        } while (!wait_or_stop(t, 0.2));
        tool_progress_finish(&t->line);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

void tool_ticker_start(tool_ticker *t, const char *label, double delay) {
    memset(t, 0, sizeof(*t));
    if (!isatty(fileno(stderr))) return;
    t->line.label = label;
    t->line.start = tool_now();
    t->delay = delay;
    if (!(delay > 0)) { /* drawn at once, before the step starts */
        t->line.stream = stderr;
        draw(&t->line, -1, NULL);
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    t->started = pthread_create(&t->thread, NULL, tick, t) == 0;
    if (!t->started) {
        tool_progress_finish(&t->line);
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
    }
}

void tool_ticker_stop(tool_ticker *t) {
    if (!t->started) return;
    pthread_mutex_lock(&t->mu);
    t->done = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    t->started = false;
}
