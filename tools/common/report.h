/*
 * report.h - reports of what went wrong, above text.h and json.h: a
 * failed library call as "<what>: <status>: <the library's message>", on
 * stderr and, in JSON mode, as the error document on stdout; usage errors
 * (exit status 2).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_REPORT_H
#define GPUPROBE_CLI_REPORT_H

#include <stddef.h>

#include "gpuprobe.h"
#include "format.h"
#include "text.h"

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

/* The longest part of a command-line argument a message echoes, in bytes
 * (as the library cuts a device spec): a longer one is cut there, at a
 * character boundary, and "..." marks the cut. */
#define CLI_ECHO_MAX 40

/* arg as a message echoes it (into buf, which needs CLI_ECHO_MAX + 4
 * bytes; returns buf). */
const char *cli_echo(char *buf, size_t size, const char *arg);

/* A value the command line gave that the program does not take: the
 * usage error "<what>, not '<value>'", the value cut as cli_echo() cuts
 * it. Returns CLI_EXIT_USAGE. */
int cli_bad_value(const char *value, const char *fmt, ...) CLI_PRINTF(2, 3);
/* cli_bad_value() for a dtype option: "--OPTION wants fp32, ... or int4",
 * the names of set in the library's words (gp_format_dtypes()), then more
 * (may be ""). */
int cli_bad_dtype(const char *value, const char *option, gp_dtype_set set, const char *more);
/* The dtypes with a training rule, for messages: "fp32, fp64, fp16, bf16". */
const char *cli_training_dtypes(void);

/* Report a usage error ("<prog>: <message>" and a hint on stderr; in JSON
 * mode also the error document with status "usage" on stdout). Returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* A value on the command line that names nothing usable (a model that is
 * not found, a config that is not a model's): "<prog>: <message>" on
 * stderr and, in JSON mode, the error document with this status token
 * ("not_found", "invalid_argument"). Returns CLI_EXIT_USAGE. */
int cli_bad_input(const char *status, const char *fmt, ...) CLI_PRINTF(2, 3);

#endif
