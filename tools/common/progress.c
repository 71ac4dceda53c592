/*
 * progress.c - the progress line on a terminal (progress.h): one thread,
 * woken every 200 ms or at once when the call is done.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "progress.h"
#include "figures.h"
#include "text.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int running, done;
    char what[128];
    double start, expect;
} tick = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_progress_wanted(void)
{
    const char *term = getenv("TERM");
    return isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

/* The line as it stands after elapsed seconds. */
static void draw(double elapsed)
{
    char e[32], left[32];
    cli_seconds(e, sizeof e, elapsed);
    if (tick.expect > 0 && tick.expect > elapsed) {
        cli_seconds(left, sizeof left, tick.expect - elapsed);
        fprintf(stderr, "\r%s: %s: %s, about %s left\033[K", cli_prog(), tick.what, e, left);
    } else {
        fprintf(stderr, "\r%s: %s: %s\033[K", cli_prog(), tick.what, e);
    }
    fflush(stderr);
}

static void *ticker(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&tick.lock);
    while (!tick.done) {
        draw(now_s() - tick.start);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000) {
            until.tv_sec++;
            until.tv_nsec -= 1000 * 1000 * 1000;
        }
        pthread_cond_timedwait(&tick.wake, &tick.lock, &until);
    }
    pthread_mutex_unlock(&tick.lock);
    return NULL;
}

void cli_progress_begin(const char *what, double expect_s)
{
    if (tick.running || !cli_progress_wanted())
        return;
    snprintf(tick.what, sizeof tick.what, "%s", what);
    tick.start = now_s();
    tick.expect = expect_s;
    tick.done = 0;
    tick.running = pthread_create(&tick.thread, NULL, ticker, NULL) == 0;
}

void cli_progress_end(void)
{
    if (!tick.running)
        return;
    pthread_mutex_lock(&tick.lock);
    tick.done = 1;
    pthread_cond_signal(&tick.wake);
    pthread_mutex_unlock(&tick.lock);
    pthread_join(tick.thread, NULL);
    tick.running = 0;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}
