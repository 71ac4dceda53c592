/*
 * report.c - failed library calls and usage errors, reported on stderr
 * and, in JSON mode, as the error document on stdout.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "report.h"

#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "<what>: <status string>[: <last error>]", or NULL when out of memory. */
static char *status_message(gpuprobe_context *ctx, gpuprobe_status st,
                            const char *fmt, va_list ap)
{
    char *what = cli_vformat(fmt, ap);
    /* Without a context (creating one failed) the status says it all. */
    const char *detail = ctx ? gpuprobe_last_error(ctx) : "";
    const char *status = gpuprobe_status_string(st);
    if (!what)
        return NULL;
    /* A message that starts with the status string already says it. */
    if (strncmp(detail, status, strlen(status)) == 0)
        status = "";
    size_t n = strlen(what) + strlen(status) + strlen(detail) + 8;
    char *msg = malloc(n);
    if (msg)
        snprintf(msg, n, "%s: %s%s%s", what, status, status[0] && detail[0] ? ": " : "",
                 detail[0] || status[0] ? detail : "");
    free(what);
    return msg;
}

char *cli_status_text(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = status_message(ctx, st, fmt, ap);
    va_end(ap);
    return msg;
}

void cli_report(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = status_message(ctx, st, fmt, ap);
    va_end(ap);
    cli_err("%s", msg ? msg : gpuprobe_status_string(st));
    free(msg);
}

int cli_fail(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = status_message(ctx, st, fmt, ap);
    va_end(ap);
    cli_err("%s", msg ? msg : gpuprobe_status_string(st));
    int rc = CLI_EXIT_FAIL;
    if (cli_json()) {
        struct json_object *doc = cli_doc();
        cli_set(doc, "error", cli_error_obj(gpuprobe_status_name(st),
                                            msg ? msg : gpuprobe_status_string(st)));
        rc = cli_print_doc(doc);
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_FAIL;
    }
    free(msg);
    return rc;
}

/* The usage error msg (NULL: out of memory); frees it. */
static int usage_error(char *msg)
{
    cli_err("%s", msg ? msg : "usage error");
    fprintf(stderr, "Try '%s --help' for more information.\n", cli_prog());
    if (cli_json()) {
        struct json_object *doc = cli_doc();
        cli_set(doc, "error", cli_error_obj("usage", msg ? msg : "usage error"));
        cli_print_doc(doc);
    }
    free(msg);
    return CLI_EXIT_USAGE;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = cli_vformat(fmt, ap);
    va_end(ap);
    return usage_error(msg);
}

int cli_bad_input(const char *status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = cli_vformat(fmt, ap);
    va_end(ap);
    cli_err("%s", msg ? msg : status);
    if (cli_json()) {
        struct json_object *doc = cli_doc();
        cli_set(doc, "error", cli_error_obj(status, msg ? msg : status));
        cli_print_doc(doc);
    }
    free(msg);
    return CLI_EXIT_USAGE;
}

const char *cli_echo(char *buf, size_t size, const char *arg)
{
    size_t n = strlen(arg);
    if (n <= CLI_ECHO_MAX) {
        snprintf(buf, size, "%s", arg);
        return buf;
    }
    n = CLI_ECHO_MAX;
    while (n > 0 && ((unsigned char)arg[n] & 0xc0) == 0x80)
        n--; /* not inside a UTF-8 sequence */
    snprintf(buf, size, "%.*s...", (int)n, arg);
    return buf;
}

int cli_bad_dtype(const char *value, const char *option, gp_dtype_set set, const char *more)
{
    char names[128];
    gp_format_dtypes(names, sizeof names, set, " or ");
    return cli_bad_value(value, "--%s wants %s%s", option, names, more);
}

const char *cli_training_dtypes(void)
{
    static char names[96];
    if (!names[0])
        gp_format_dtypes(names, sizeof names, GP_DTYPES_TRAINING, ", ");
    return names;
}

int cli_bad_value(const char *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = cli_vformat(fmt, ap);
    va_end(ap);
    char echo[CLI_ECHO_MAX + 4];
    cli_echo(echo, sizeof echo, value);
    char *msg = what ? malloc(strlen(what) + sizeof echo + 8) : NULL;
    if (msg)
        sprintf(msg, "%s, not '%s'", what, echo);
    free(what);
    return usage_error(msg);
}
