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

/* Text in columns. The width of text on a terminal once quoted: each
 * valid UTF-8 character one column (wide and combining characters are not
 * told apart), each escape its length ("\x1b" four). */
size_t cli_width(const char *s);
/* Fit s into exactly width columns once quoted: the longest prefix of
 * whole characters that fits (cut with "..." when s does not fit whole,
 * never inside an escape), then spaces (left-aligned), or spaces first
 * (right-aligned). Writes raw bytes for cli_put()/cli_line(), which quote
 * them; dst needs 4 * width + 1 bytes. Returns dst. */
char *cli_fit(char *dst, size_t size, const char *s, size_t width, int right);

/* Colour, only on a terminal: on when standard output is a terminal,
 * NO_COLOR is unset or empty and TERM is not "dumb" (decided once). A
 * style set with cli_style() holds from that point of the current line
 * to the next cli_style() or the line's end; it changes no column and
 * does nothing when colour is off. */
typedef enum cli_style_id {
    CLI_PLAIN = 0,
    CLI_BOLD = 1,
    CLI_DIM = 2,
    CLI_GREEN = 3,
    CLI_YELLOW = 4
} cli_style_id;
int cli_color(void);
void cli_style(cli_style_id style);

/* "<prog>: <message>" on stderr, quoted. */
void cli_err(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Write what was printed now (a program that prints more than once, as a
 * refresh loop): 0, or -1 after a write error, which cli_finish() then
 * reports with its reason. */
int cli_flush(void);

/* Last call of every program: ends a pending text line, flushes stdout and
 * checks that everything was written ("<prog>: write error: <reason>" on
 * stderr otherwise, as coreutils does). Returns the exit status: status,
 * or CLI_EXIT_FAIL when the output was lost and status was 0. */
int cli_finish(int status);

#endif
