/*
 * cuda_info.c - the lesson's PyTorch check, line for line:
 *
 *     print(f"CUDA available: {torch.cuda.is_available()}")
 *     print(f"CUDA version: {torch.version.cuda}")
 *     if torch.cuda.is_available():
 *         print(f"GPU: {torch.cuda.get_device_name(0)}")
 *         print(f"Memory: {torch.cuda.get_device_properties(0).total_memory / 1e9:.1f} GB")
 *
 * and, when CUDA is not available, one more line saying why:
 *
 *     Reason: <cause> (<detail>)
 *
 * "CUDA version" is the version of the CUDA runtime that was actually
 * loaded (None when none could be). No CUDA context is created. Exits 0
 * whether or not CUDA is available: the answer is the output.
 *
 * The installed command gpuprobe-info(1) adds every device and JSON.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

static const cli_option no_options[] = {{NULL, NULL, NULL, 0}};
static const cli_command command = {
    .name = "cuda_info",
    .summary = "Is CUDA usable, which version, which GPU (the lesson's torch.cuda check).",
    .options = no_options,
    .exit1 = "a query failed",
    .footer = "The installed command: gpuprobe-info.",
};

int main(int argc, char **argv)
{
    cli_start(&command, argc, argv);
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0)
        ;
    if (opt == CLI_ARGS_EXIT)
        return cli_finish(a.status);

    gpuprobe_context *ctx;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK)
        return cli_finish(cli_fail(NULL, st, "creating a context"));

    gpuprobe_cuda_cause cause;
    const char *detail;
    gpuprobe_cuda_status(ctx, &cause, &detail);
    cli_line("CUDA available: %s", cause == GPUPROBE_CUDA_AVAILABLE ? "True" : "False");

    int rt;
    char version[32] = "None";
    if (gpuprobe_cuda_runtime_version(ctx, &rt) == GPUPROBE_OK)
        gp_format_cuda_version(version, sizeof version, rt);
    cli_line("CUDA version: %s", version);

    int rc = CLI_EXIT_OK;
    if (cause == GPUPROBE_CUDA_AVAILABLE) {
        const char *name;
        int64_t total;
        /* cuda:0 is device 1: device 0 is always the CPU. */
        st = gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_NAME, &name);
        if (st == GPUPROBE_OK)
            st = gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_TOTAL_MEMORY, &total);
        if (st == GPUPROBE_OK) {
            cli_line("GPU: %s", name);
            cli_line("Memory: %.1f GB", (double)total / 1e9);
        } else {
            rc = cli_fail(ctx, st, "reading cuda:0");
        }
    } else {
        cli_line("Reason: %s (%s)", gpuprobe_cuda_cause_string(cause), detail);
    }
    gpuprobe_context_destroy(ctx);
    return cli_finish(rc);
}
