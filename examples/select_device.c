/*
 * select_device.c - the lesson's "No GPU? No problem":
 *
 *     device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
 *     print(f"Using: {device}")
 *
 * with gpuprobe_select(): a device spec ("auto" takes the usable GPU with
 * the most free memory, else the CPU; "cpu", "cuda", "cuda:N" never fall
 * back), optional requirements (here: free memory), the GPUPROBE_DEVICE
 * override from the environment, and a one-line reason for the choice.
 *
 * Exit status: 0 a device was chosen; 1 none meets the requirements, or
 * CUDA was asked for and is not usable; 2 bad command line or a malformed
 * spec. The installed command gpuprobe-select(1) adds compute-capability
 * and model-fit requirements and JSON.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdio.h>

enum { OPT_DEVICE, OPT_MIN_FREE };
static const cli_option options[] = {
    [OPT_DEVICE] = {"device", "SPEC", "auto (default), cpu, cuda or cuda:N"},
    [OPT_MIN_FREE] = {"min-free", "BYTES", "the device must have this much free memory (7e9 ok)"},
    {NULL, NULL, NULL},
};
static const cli_command command = {
    .name = "select_device",
    .summary = "Choose the device a program should use, and say why.",
    .options = options,
    .exit1 = "no device meets the requirements, or CUDA was asked for and is not usable",
    .footer = "The installed command: gpuprobe-select.",
};

int main(int argc, char **argv)
{
    cli_start(&command, argc, argv);
    const char *spec = "auto";
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0) {
        if (opt == OPT_DEVICE)
            spec = v;
        else if (cli_parse_size(v, UINT64_C(1) << 62, &req.min_free_bytes) != 0)
            return cli_finish(cli_bad_value(v, "--min-free wants a size in bytes (20GB, 20GiB, 2e10)"));
    }
    if (opt == CLI_ARGS_EXIT)
        return cli_finish(a.status);

    gpuprobe_context *ctx;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK)
        return cli_finish(cli_fail(NULL, st, "creating a context"));

    size_t device;
    const char *reason;
    st = gpuprobe_select(ctx, spec, &req, 0, &device, &reason);
    if (st != GPUPROBE_OK) {
        int rc = cli_fail(ctx, st, "selecting a device");
        gpuprobe_context_destroy(ctx);
        return cli_finish(st == GPUPROBE_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : rc);
    }
    /* The reason lasts until the next call on the context: copy it. */
    char why[1024];
    snprintf(why, sizeof why, "%s", reason);
    const char *used = "?", *name = "?";
    gpuprobe_device_get_string(ctx, device, GPUPROBE_ATTR_SPEC, &used);
    gpuprobe_device_get_string(ctx, device, GPUPROBE_ATTR_NAME, &name);
    cli_line("Using: %s", used);
    cli_line("Device: %s", name);
    cli_line("Reason: %s", why);
    gpuprobe_context_destroy(ctx);
    return cli_finish(CLI_EXIT_OK);
}
