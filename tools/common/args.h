/*
 * args.h - the command line, above report.h: the command and its options,
 * the one option grammar (cli_next()), --help, --version, and whether
 * --json was asked for.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_ARGS_H
#define GPUPROBE_CLI_ARGS_H

#include "gpuprobe.h"

typedef struct cli_option {
    const char *name; /* long name without "--"; "json" turns on --json */
    const char *arg;  /* placeholder of its value in --help ("N"); NULL: a flag;
                       * in brackets ("[FROM..TO]"): the value may be left out */
    const char *help; /* one line for --help */
    char letter;      /* its short alias ('i' for -i), or 0 for none */
} cli_option;

typedef struct cli_command {
    const char *name;          /* as in messages: "gpuprobe-smi" */
    const char *summary;       /* what it does, for --help (may span lines) */
    const cli_option *options; /* ends with an entry whose name is NULL */
    const char *exit1;         /* what exit status 1 means here, for --help */
    const char *footer;        /* last line of --help, or NULL */
    /* The command's parts, for cli_main() (start.h); NULL in programs that
     * walk the command line themselves. */
    int (*option)(int opt, const char *value); /* one option (index into options): CLI_EXIT_OK, or a usage error's status */
    int (*check)(void);                        /* after the last option, or NULL: CLI_EXIT_OK or a usage error's status */
    int (*run)(gpuprobe_context *ctx);         /* the work; returns the exit status */
} cli_command;

/* First call of every program: remembers the command (its name is the
 * program's in every message), makes sure file descriptors 0-2 are open (a
 * closed one is held by /dev/null opened read-only, so that no file the
 * library opens lands on it and writes to a closed stdout still fail), and
 * notes whether --json is on the command line, walking it as cli_next()
 * will, so that even a usage error can answer in JSON. */
void cli_start(const cli_command *cmd, int argc, char **argv);

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
 * Accepts "--name VALUE" and "--name=VALUE", exact names only, and for an
 * option with a letter "-x VALUE", "-xVALUE" and "-x=VALUE" (a flag's
 * letter stands alone: "-x"; letters are not bundled); an option whose
 * value may be left out takes the next argument only when that does not
 * start with '-' (the commands take no operands); "--help" and "-h"
 * print the help on stdout and "--version" the version (status 0);
 * "--json" is consumed here. Anything else (unknown option, missing value,
 * a value given to a flag, an operand) is a usage error: reported, status
 * 2. An option given without its optional value comes with *value NULL. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;
    int status; /* with CLI_ARGS_EXIT: the exit status */
} cli_args;
#define CLI_ARGS_INIT(argc, argv) {(argc), (argv), 1, 0}
enum { CLI_ARGS_END = -1, CLI_ARGS_EXIT = -2 };
int cli_next(cli_args *a, const char **value);

#endif
