/*
 * start.c - the commands' one start-up: options, context, work, end.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "start.h"

#include "report.h"
#include "text.h"

#include <stdlib.h>

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

/* A GPUPROBE_* variable the library does not take (GPUPROBE_CUDA=maybe, a
 * GPUPROBE_DEVICE that is no device spec) is a usage error, whether or
 * not this command would have read it: the library names the variable.
 * Any other failure here is left to the command, which reports it where
 * it happens. */
static int check_environment(gpuprobe_context *ctx)
{
    size_t n = 0, dev = 0;
    gpuprobe_status st = gpuprobe_device_count(ctx, &n);
    const char *spec = getenv("GPUPROBE_DEVICE");
    if (st == GPUPROBE_OK && spec && spec[0])
        st = gpuprobe_select(ctx, "auto", NULL, 0, &dev, NULL);
    if (st == GPUPROBE_ERR_INVALID_ARGUMENT)
        return cli_usage_error("%s", gpuprobe_last_error(ctx));
    return CLI_EXIT_OK;
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
    rc = check_environment(ctx);
    if (rc == CLI_EXIT_OK)
        rc = cmd->run(ctx);
    gpuprobe_context_destroy(ctx);
    return cli_finish(rc);
}
