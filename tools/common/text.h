/*
 * text.h - the bottom layer of the commands' helper library: the program's
 * name, the one quoting rule for text on a terminal, UTF-8 repair, the
 * current output line, messages on stderr, and the end (write errors and
 * the exit status). Calls nothing above it.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_TEXT_H
#define GPUPROBE_CLI_TEXT_H

#include <stdarg.h>
#include <stddef.h>

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* The name messages start with ("gpuprobe-smi"); "gpuprobe" until set. */
void cli_set_prog(const char *name);
const char *cli_prog(void);

/* The quoting rule: a backslash becomes "\\", tab, newline and carriage
 * return "\t", "\n", "\r", and every other C0 control byte, DEL, each
 * byte of a C1 control (U+0080-U+009F) and each byte that is not part of
 * valid UTF-8 "\xHH"; everything else is copied. Quotes the len bytes at
 * src into dst (always NUL-terminated when size > 0) and returns the length
 * the whole quoted text needs, as snprintf does. */
size_t cli_quote(char *dst, size_t size, const char *src, size_t len);

/* A copy of s with every byte that is not part of valid UTF-8 replaced by
 * U+FFFD (malloc'd; NULL when out of memory). */
char *cli_utf8_clean(const char *s);

/* vsnprintf into a new buffer (malloc'd; NULL when out of memory). */
char *cli_vformat(const char *fmt, va_list ap);

/* Text output on stdout, one line at a time: cli_put() appends to the
 * current line, cli_line() appends and writes the line, quoted as a whole
 * (so everything printed obeys the rule), and a newline. */
void cli_put(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_line(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_endl(void); /* ends the line (an empty one if nothing was put) */

/* "<prog>: <message>" on stderr, quoted. */
void cli_err(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Last call of every program: ends a pending text line, flushes stdout and
 * checks that everything was written ("<prog>: write error: <reason>" on
 * stderr otherwise, as coreutils does). Returns the exit status: status,
 * or CLI_EXIT_FAIL when the output was lost and status was 0. */
int cli_finish(int status);

#endif
