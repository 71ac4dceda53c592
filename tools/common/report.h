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

#include "gpuprobe.h"
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

/* Report a usage error ("<prog>: <message>" and a hint on stderr; in JSON
 * mode also the error document with status "usage" on stdout). Returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

#endif
