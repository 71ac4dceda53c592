/*
 * start.c - the commands' one start-up: options, context, work, end.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "start.h"

#include "report.h"
#include "text.h"

static int parse_args(const cli_command *cmd, int argc, char **argv)
{
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0) {
        int rc = cmd->option(opt, v);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (opt == CLI_ARGS_EXIT)
        return a.status == CLI_EXIT_OK ? -1 : a.status; /* -1: --help or --version, done */
    return cmd->check ? cmd->check() : CLI_EXIT_OK;
}

int cli_main(const cli_command *cmd, int argc, char **argv)
{
    cli_start(cmd, argc, argv);
    int rc = parse_args(cmd, argc, argv);
    if (rc != CLI_EXIT_OK)
        return cli_finish(rc < 0 ? CLI_EXIT_OK : rc);
    gpuprobe_context *ctx = NULL;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK)
        return cli_finish(cli_fail(NULL, st, "creating a context"));
    rc = cmd->run(ctx);
    gpuprobe_context_destroy(ctx);
    return cli_finish(rc);
}
