/*
 * args.c - the command line: the command, the one option grammar, --help,
 * --version, and the --json pre-scan.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "args.h"

#include "json.h"
#include "report.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const cli_command *command;

/* Whether o's value may be left out ("[FROM..TO]"). */
static int optional_value(const cli_option *o)
{
    return o->arg && o->arg[0] == '[';
}

/* Whether the argument after an option with an optional value is that
 * value: anything but another option. */
static int takes_next(const cli_option *o, const char *next)
{
    return !optional_value(o) || (next && next[0] != '-');
}

/* The option of cmd named by the n bytes at name, or NULL. */
static const cli_option *find_option(const cli_command *cmd, const char *name, size_t n)
{
    for (const cli_option *o = cmd->options; o && o->name; o++)
        if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
            return o;
    return NULL;
}

/* The option of cmd whose letter is c, or NULL. */
static const cli_option *find_letter(const cli_command *cmd, char c)
{
    for (const cli_option *o = cmd->options; c && o && o->name; o++)
        if (o->letter == c)
            return o;
    return NULL;
}

void cli_start(const cli_command *cmd, int argc, char **argv)
{
    command = cmd;
    cli_set_prog(cmd->name);
    cli_set_json(0);
    /* Hold closed standard descriptors: opened read-only, a held stdout or
     * stderr fails every write (EBADF), as the closed one would have. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int got = open("/dev/null", O_RDONLY);
            if (got >= 0 && got != fd)
                close(got);
        }
    }
    /* Walk the command line as cli_next() will, so that the value of an
     * option ("--device --json") is not taken for --json. */
    for (int i = 1; i < argc && argv[i]; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0)
            break;
        if (arg[0] == '-' && arg[1] != '-' && arg[1] && !arg[2]) {
            const cli_option *s = find_letter(cmd, arg[1]);
            i += s && s->arg; /* "-x VALUE": the next one is its value */
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || strchr(arg, '='))
            continue;
        const cli_option *o = find_option(cmd, arg + 2, strlen(arg + 2));
        if (o && o->arg && takes_next(o, i + 1 < argc ? argv[i + 1] : NULL))
            i++;
        else if (o && strcmp(o->name, "json") == 0)
            cli_set_json(1);
    }
}

static void help(const cli_command *cmd)
{
    printf("usage: %s [OPTION]...\n%s\n\nOptions:\n", cmd->name, cmd->summary);
    for (const cli_option *o = cmd->options; o && o->name; o++) {
        char left[48], letter[8] = "";
        if (o->letter)
            snprintf(letter, sizeof letter, "-%c, ", o->letter);
        snprintf(left, sizeof left, "%s--%s%s%s", letter, o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        printf("  %-20s %s\n", left, o->help);
    }
    printf("  %-20s %s\n", "--help, -h", "print this help and exit");
    printf("  %-20s %s\n", "--version, -V", "print the version and exit");
    printf("\nExit status: 0 success; 1 %s; 2 bad command line.\n", cmd->exit1);
    if (cmd->footer)
        printf("%s\n", cmd->footer);
}

/* An argument as messages echo it (cli_echo()), in a buffer of the caller's frame. */
#define ECHO(s) cli_echo((char[CLI_ECHO_MAX + 4]){0}, CLI_ECHO_MAX + 4, (s))

/* "-x", "-x VALUE", "-xVALUE", "-x=VALUE": the option's index, or
 * CLI_ARGS_EXIT after a usage error. */
static int short_option(const cli_command *cmd, cli_args *a, const char *arg,
                        const char **value)
{
    const cli_option *o = find_letter(cmd, arg[1]);
    const char *rest = arg + 2;
    if (!o) {
        char opt[3] = {'-', arg[1], '\0'};
        a->status = cli_usage_error("unknown option '%s'", opt);
        return CLI_ARGS_EXIT;
    }
    if (!o->arg) {
        if (*rest) {
            a->status = cli_usage_error("option '-%c' takes no value", o->letter);
            return CLI_ARGS_EXIT;
        }
        if (strcmp(o->name, "json") == 0)
            return cli_next(a, value); /* cli_start() saw it already */
    } else if (*rest) {
        *value = rest[0] == '=' ? rest + 1 : rest;
    } else if (a->i < a->argc && takes_next(o, a->argv[a->i])) {
        *value = a->argv[a->i++];
    } else if (!optional_value(o)) {
        a->status = cli_usage_error("option '-%c' needs a value (%s)", o->letter, o->arg);
        return CLI_ARGS_EXIT;
    }
    return (int)(o - cmd->options);
}

int cli_next(cli_args *a, const char **value)
{
    const cli_command *cmd = command;
    *value = NULL;
    if (a->i >= a->argc)
        return CLI_ARGS_END;
    const char *arg = a->argv[a->i++];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        help(cmd);
        a->status = CLI_EXIT_OK;
        return CLI_ARGS_EXIT;
    }
    if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
        printf("%s (libgpuprobe) %s\n", cmd->name, gpuprobe_version_string());
        a->status = CLI_EXIT_OK;
        return CLI_ARGS_EXIT;
    }
    if (strcmp(arg, "--") == 0) {
        if (a->i < a->argc) {
            a->status = cli_usage_error("unexpected argument '%s'", ECHO(a->argv[a->i]));
            return CLI_ARGS_EXIT;
        }
        return CLI_ARGS_END;
    }
    if (arg[0] == '-' && arg[1] && arg[1] != '-')
        return short_option(cmd, a, arg, value);
    if (strncmp(arg, "--", 2) != 0) {
        a->status = cli_usage_error("unexpected argument '%s'", ECHO(arg));
        return CLI_ARGS_EXIT;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    const cli_option *o = find_option(cmd, name, eq ? (size_t)(eq - name) : strlen(name));
    if (!o) {
        a->status = cli_usage_error("unknown option '%s'", ECHO(arg));
        return CLI_ARGS_EXIT;
    }
    if (!o->arg) {
        if (eq) {
            a->status = cli_usage_error("option '--%s' takes no value", o->name);
            return CLI_ARGS_EXIT;
        }
        if (strcmp(o->name, "json") == 0)
            return cli_next(a, value); /* cli_start() saw it already */
    } else if (eq) {
        *value = eq + 1;
    } else if (a->i < a->argc && takes_next(o, a->argv[a->i])) {
        *value = a->argv[a->i++];
    } else if (!optional_value(o)) {
        a->status = cli_usage_error("option '--%s' needs a value (%s)", o->name, o->arg);
        return CLI_ARGS_EXIT;
    }
    return (int)(o - cmd->options);
}
