/*
 * progress.h - a line of progress on standard error while a long call runs,
 * on a terminal only: what is running, how long it has taken, and about
 * how long it has left when that can be said. A thread rewrites the line
 * a few times a second while the caller's thread is inside the call (the
 * library's timed matmul runs seconds without returning); nothing is
 * written when standard error is not a terminal.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_PROGRESS_H
#define GPUPROBE_CLI_PROGRESS_H

/* 1 when progress is shown: standard error is a terminal (and TERM is not
 * "dumb"). */
int cli_progress_wanted(void);
/* Show "<prog>: <what>: 3.2 s, about 5 s left" (expect_s > 0) or
 * "<prog>: <what>: 3.2 s" until cli_progress_end(); what is copied.
 * Nothing when progress is not wanted or the thread cannot start. */
void cli_progress_begin(const char *what, double expect_s);
/* Stop the line and clear it. */
void cli_progress_end(void);

#endif
