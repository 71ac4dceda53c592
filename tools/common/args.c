/*
 * args.c - the command line: options, --help, --version, and the values
 * the programs take (counts, compute capabilities, workloads).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_command *cli_command_get(void);

static void help(const cli_command *cmd)
{
    printf("usage: %s [OPTION]...\n%s\n\nOptions:\n", cmd->name, cmd->summary);
    for (const cli_option *o = cmd->options; o && o->name; o++) {
        char left[48];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        printf("  %-20s %s\n", left, o->help);
    }
    printf("  %-20s %s\n", "--help, -h", "print this help and exit");
    printf("  %-20s %s\n", "--version", "print the version and exit");
    printf("\nExit status: 0 success; 1 %s; 2 bad command line.\n", cmd->exit1);
    if (cmd->footer)
        printf("%s\n", cmd->footer);
}

int cli_next(cli_args *a, const char **value)
{
    const cli_command *cmd = cli_command_get();
    *value = NULL;
    if (a->i >= a->argc)
        return CLI_ARGS_END;
    const char *arg = a->argv[a->i++];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        help(cmd);
        a->status = CLI_EXIT_OK;
        return CLI_ARGS_EXIT;
    }
    if (strcmp(arg, "--version") == 0) {
        printf("%s (libgpuprobe) %s\n", cmd->name, gpuprobe_version_string());
        a->status = CLI_EXIT_OK;
        return CLI_ARGS_EXIT;
    }
    if (strcmp(arg, "--") == 0) {
        if (a->i < a->argc) {
            a->status = cli_usage_error("unexpected argument '%s'", a->argv[a->i]);
            return CLI_ARGS_EXIT;
        }
        return CLI_ARGS_END;
    }
    if (strncmp(arg, "--", 2) != 0) {
        a->status = cli_usage_error("unexpected argument '%s'", arg);
        return CLI_ARGS_EXIT;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    for (const cli_option *o = cmd->options; o && o->name; o++) {
        if (strlen(o->name) != n || strncmp(o->name, name, n) != 0)
            continue;
        if (!o->arg) {
            if (eq) {
                a->status = cli_usage_error("option '--%s' takes no value", o->name);
                return CLI_ARGS_EXIT;
            }
            if (strcmp(o->name, "json") == 0)
                return cli_next(a, value); /* cli_start() saw it already */
        } else if (eq) {
            *value = eq + 1;
        } else if (a->i < a->argc) {
            *value = a->argv[a->i++];
        } else {
            a->status = cli_usage_error("option '--%s' needs a value (%s)", o->name, o->arg);
            return CLI_ARGS_EXIT;
        }
        return (int)(o - cmd->options);
    }
    a->status = cli_usage_error("unknown option '%s'", arg);
    return CLI_ARGS_EXIT;
}

int cli_parse_count(const char *text, uint64_t limit, uint64_t *out)
{
    if (!text || !*text)
        return -1;
    for (const char *p = text; *p; p++)
        if (!strchr("0123456789.eE+", *p))
            return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno || !end || *end || !(v >= 0) || v > (double)limit || v != floor(v))
        return -1;
    /* (double)limit may round up past limit: compare as integers too. */
    if (v >= 18446744073709551616.0 || (uint64_t)v > limit)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_cc(const char *text, int *major, int *minor)
{
    if (!text || *text < '0' || *text > '9')
        return -1;
    char *end = NULL;
    long a = strtol(text, &end, 10), b = 0;
    if (*end == '.') {
        const char *m = end + 1;
        if (*m < '0' || *m > '9')
            return -1;
        b = strtol(m, &end, 10);
    }
    if (*end != '\0' || a > 1000 || b > 1000)
        return -1;
    *major = (int)a;
    *minor = (int)b;
    return 0;
}

int cli_parse_workload(const char *text, gpuprobe_workload *out)
{
    static const gpuprobe_workload all[] = {GPUPROBE_WORKLOAD_WEIGHTS,
                                            GPUPROBE_WORKLOAD_INFERENCE,
                                            GPUPROBE_WORKLOAD_TRAINING};
    for (size_t i = 0; text && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, gpuprobe_workload_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

int cli_have_rule(gpuprobe_dtype dtype, gpuprobe_workload workload)
{
    uint64_t bytes = 0;
    return gpuprobe_capacity_bytes(1, dtype, workload, &bytes) == GPUPROBE_OK;
}
