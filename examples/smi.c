/*
 * smi.c - the lesson's first step, "Check if you have one: nvidia-smi":
 * every compute device this process can use, with its memory, and why CUDA
 * is not usable when it is not.
 *
 * The calls: gpuprobe_context_create(); gpuprobe_cuda_status() for the
 * named cause; gpuprobe_device_count() (device 0 is always the CPU, then
 * cuda:0, cuda:1, ...); gpuprobe_device_get_string() / _get_int() for
 * attributes; gpuprobe_device_memory() for total and free memory (on a GPU
 * read through NVML, as nvidia-smi reads it, creating no CUDA context).
 *
 * The installed command gpuprobe-smi(1) prints the full table, OpenBLAS
 * details and JSON.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

static const cli_option no_options[] = {{NULL, NULL, NULL, 0}};
static const cli_command command = {
    .name = "smi",
    .summary = "List every compute device, the CPU included, with its memory.",
    .options = no_options,
    .exit1 = "a query failed",
    .footer = "The installed command: gpuprobe-smi.",
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
    if (cause != GPUPROBE_CUDA_AVAILABLE) {
        cli_line("No usable CUDA GPU: %s [%s]", gpuprobe_cuda_cause_string(cause),
                 gpuprobe_cuda_cause_name(cause));
        cli_line("  %s", detail);
    }

    size_t count = 0;
    gpuprobe_device_count(ctx, &count);
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < count; i++) {
        const char *spec = "?", *name = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &spec);
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &name);
        cli_put("%-7s %s: ", spec, name);

        gpuprobe_memory_info mem = GPUPROBE_MEMORY_INFO_INIT;
        st = gpuprobe_device_memory(ctx, i, &mem, 0);
        if (st != GPUPROBE_OK) {
            cli_line("memory unknown");
            cli_report(ctx, st, "%s: memory query", spec);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        char total[32], avail[32];
        gp_format_bytes(total, sizeof total, mem.total_bytes);
        gp_format_bytes(avail, sizeof avail, mem.available_bytes);
        cli_put("%s total, %s %s", total, avail, i == 0 ? "available" : "free");

        int64_t major, minor;
        if (gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MAJOR, &major) == GPUPROBE_OK &&
            gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MINOR, &minor) == GPUPROBE_OK)
            cli_put(", compute capability %lld.%lld", (long long)major, (long long)minor);
        cli_endl();
    }
    gpuprobe_context_destroy(ctx);
    return cli_finish(rc);
}
