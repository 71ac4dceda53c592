/*
 * cli.h - what the gpuprobe commands (tools/) and the lesson's example
 * programs (examples/) share: the command line, text output under one
 * quoting rule, JSON output through json-c, error reports, exit statuses
 * and write-error detection. Not part of the library, which never prints:
 * a small static library linked into the programs.
 *
 * Exit statuses, the same in every program (docs/json.md, the man pages):
 *   0  success: the question was answered
 *   1  the answer is "no" (nothing meets a stated requirement) or a query
 *      failed (the output says which and why), or the output could not be
 *      written
 *   2  usage error: a bad option or value on the command line
 *
 * Text output: every line goes through cli_quote(), so nothing that comes
 * from the system (a device name, a library message, a path echoed back by
 * the dynamic loader) reaches a terminal as raw control bytes or invalid
 * UTF-8. JSON output: every string is valid UTF-8 (invalid bytes become
 * U+FFFD) and escaped by json-c.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_H
#define GPUPROBE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprobe.h"

struct json_object;

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* The "schema" number at the top of every JSON document (docs/json.md).
 * Grows when a member changes meaning or goes away; new members do not
 * change it. */
#define CLI_JSON_SCHEMA 1

/* ---- the program and its command line ----------------------------------- */

typedef struct cli_option {
    const char *name; /* long name without "--"; "json" turns on --json */
    const char *arg;  /* placeholder of its value in --help ("N"); NULL: a flag */
    const char *help; /* one line for --help */
} cli_option;

typedef struct cli_command {
    const char *name;          /* as in messages: "gpuprobe-smi" */
    const char *summary;       /* what it does, for --help (may span lines) */
    const cli_option *options; /* ends with an entry whose name is NULL */
    const char *exit1;         /* what exit status 1 means here, for --help */
    const char *footer;        /* last line of --help, or NULL */
} cli_command;

/* First call of every program: remembers the command, makes sure file
 * descriptors 0-2 are open (a closed one is held by /dev/null opened
 * read-only, so that no file the library opens lands on it and writes to a
 * closed stdout still fail), and notes whether --json is on the command
 * line, so that even a usage error can answer in JSON. */
void cli_start(const cli_command *cmd, int argc, char **argv);

const char *cli_prog(void);
int cli_json(void); /* 1 when --json was given */

/* The command line, one option at a time:
 *
 *     cli_args a = CLI_ARGS_INIT(argc, argv);
 *     const char *v;
 *     int opt;
 *     while ((opt = cli_next(&a, &v)) >= 0)
 *         switch (opt) { ... }           (index into cmd->options)
 *     if (opt == CLI_ARGS_EXIT)
 *         return cli_finish(a.status);
 *
 * Accepts "--name VALUE" and "--name=VALUE", exact names only; "--help"
 * and "-h" print the help on stdout and "--version" the version (status 0);
 * "--json" is consumed here. Anything else (unknown option, missing value,
 * a value given to a flag, an operand) is a usage error: reported, status
 * 2. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;
    int status; /* with CLI_ARGS_EXIT: the exit status */
} cli_args;
#define CLI_ARGS_INIT(argc, argv) {(argc), (argv), 1, 0}
enum { CLI_ARGS_END = -1, CLI_ARGS_EXIT = -2 };
int cli_next(cli_args *a, const char **value);

/* Report a usage error ("<prog>: <message>" and a hint on stderr; in JSON
 * mode also the error document with status "usage" on stdout). Returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Values: 0 on success, -1 when malformed (nothing written). */
/* A count written as an integer or in e-notation ("7e9", "1.5e10"): whole,
 * non-negative, at most limit. */
int cli_parse_count(const char *text, uint64_t limit, uint64_t *out);
/* A compute capability "X" or "X.Y". */
int cli_parse_cc(const char *text, int *major, int *minor);
/* "weights", "inference", "training". */
int cli_parse_workload(const char *text, gpuprobe_workload *out);
/* 1 when the library has a capacity rule for this pair (no training rule
 * for fp8, int8, int4). */
int cli_have_rule(gpuprobe_dtype dtype, gpuprobe_workload workload);

/* ---- text ------------------------------------------------------------- */

/* The quoting rule: a backslash becomes "\\", tab, newline and carriage
 * return "\t", "\n", "\r", and every other C0 control byte, DEL, each
 * byte of a C1 control (U+0080-U+009F) and each byte that is not part of
 * valid UTF-8 "\xHH"; everything else is copied. Quotes the len bytes at
 * src into dst (always NUL-terminated when size > 0) and returns the length
 * the whole quoted text needs, as snprintf does. */
size_t cli_quote(char *dst, size_t size, const char *src, size_t len);

/* Text output on stdout, one line at a time: cli_put() appends to the
 * current line, cli_line() appends and writes the line, quoted as a whole
 * (so everything printed obeys the rule), and a newline. */
void cli_put(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_line(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_endl(void); /* ends the line (an empty one if nothing was put) */

/* "<prog>: <message>" on stderr, quoted. */
void cli_err(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "<what>: <status string>: <gpuprobe_last_error()>" (malloc'd; NULL when
 * out of memory): what cli_report() prints after the program's name. */
char *cli_status_text(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
    CLI_PRINTF(3, 4);

/* "<prog>: <what>: <status string>: <gpuprobe_last_error()>" on stderr. */
void cli_report(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
    CLI_PRINTF(3, 4);

/* The program cannot go on: cli_report(), and in JSON mode the error
 * document {"schema", "command", "error": {"status", "message"}} on
 * stdout. Returns CLI_EXIT_FAIL. */
int cli_fail(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
    CLI_PRINTF(3, 4);

/* "12.3 GB" (decimal units, as the lesson prints), "11.4 B" parameters,
 * "13.0" from a CUDA version number (1000 * major + 10 * minor). */
void cli_bytes(char *buf, size_t size, uint64_t bytes);
void cli_count(char *buf, size_t size, uint64_t count);
void cli_cuda_version(char *buf, size_t size, int version);
/* A duration: "1.807s" from 0.1 s up, "0.342 ms", "8.5 us" below. */
void cli_seconds(char *buf, size_t size, double seconds);
/* "median of 5 runs" or, when each run timed a batch of calls, "median of
 * 100 runs of 40 calls" (GPUPROBE_METRIC_RUNS, GPUPROBE_METRIC_BATCH). */
void cli_runs(char *buf, size_t size, const gpuprobe_matmul_result *r);

/* ---- JSON --------------------------------------------------------------- */

/* Builders. A NULL object stands for an allocation that failed: setters
 * ignore it, and cli_print_doc() then reports "out of memory" instead of
 * printing a document with holes. */
struct json_object *cli_doc(void); /* {"schema": 1, "command": "<prog>"} */
struct json_object *cli_obj(void);
struct json_object *cli_arr(void);
/* Strings: invalid UTF-8 replaced by U+FFFD; NULL s writes null. */
void cli_set_str(struct json_object *o, const char *key, const char *s);
void cli_set_i64(struct json_object *o, const char *key, int64_t v);
void cli_set_u64(struct json_object *o, const char *key, uint64_t v);
/* Shortest text that reads back as v; NaN and infinities write null. */
void cli_set_num(struct json_object *o, const char *key, double v);
void cli_set_bool(struct json_object *o, const char *key, int v);
void cli_set_null(struct json_object *o, const char *key);
/* A string value, as cli_set_str() writes it (for arrays). */
struct json_object *cli_string(const char *s);
/* Takes ownership of v (an object from cli_obj(), cli_arr(), ...). */
void cli_set(struct json_object *o, const char *key, struct json_object *v);
void cli_push(struct json_object *arr, struct json_object *v);
/* {"status": status, "message": message}: the one error shape. */
struct json_object *cli_error_obj(const char *status, const char *message);

/* Print doc on one line, then free it. Returns CLI_EXIT_OK, or
 * CLI_EXIT_FAIL after reporting an allocation failure. */
int cli_print_doc(struct json_object *doc);

/* A copy of s with every byte that is not part of valid UTF-8 replaced by
 * U+FFFD (malloc'd; NULL when out of memory). */
char *cli_utf8_clean(const char *s);

/* ---- files ------------------------------------------------------------------ */

/* Replace the file at path with the len bytes at data, atomically: they go
 * to a new hidden file beside it (".<name>.<8 hex digits>": readers of a
 * directory that skip dot files, such as Node Feature Discovery, never see
 * it), which gets the mode (whatever the umask), is flushed to disk (fsync)
 * and renamed over path; the directory is then synced (best effort).
 * Readers see the old file or the new one, never a part of either. A
 * symbolic link at path is followed (links to links too, relative ones
 * from the link's directory; a link to nothing makes the file it names),
 * and the file it leads to is replaced in its own directory: the link
 * stays. Anything there that is not a regular file (a device such as
 * /dev/null, a FIFO, a socket, a directory) is refused and left alone.
 * Returns 0, or -1 with why (why_size bytes) saying what failed and what
 * was left: "creating a temporary file beside it: Permission denied (the
 * old file, if any, is unchanged)", "it is a FIFO, not a regular file; it
 * was left as it is". The temporary file is then removed. */
int cli_replace_file(const char *path, const char *data, size_t len, unsigned mode, char *why,
                     size_t why_size);

/* ---- the end -------------------------------------------------------------- */

/* Last call of every program: ends a pending text line, flushes stdout and
 * checks that everything was written ("<prog>: write error: <reason>" on
 * stderr otherwise, as coreutils does). Returns the exit status: status,
 * or CLI_EXIT_FAIL when the output was lost and status was 0. */
int cli_finish(int status);

#endif
