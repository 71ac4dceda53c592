/*
 * vram_capacity.c - the lesson's exercise 3: "Check how much GPU memory you
 * have and estimate the largest model you can fit (rule of thumb: 2 bytes
 * per parameter for fp16)".
 *
 * gpuprobe_device_capacity() counts against *free* memory minus what a CUDA
 * context really takes (measured when possible), not the total the lesson's
 * rule divides; the CPU's RAM is counted cgroup-aware. With --params N it
 * answers "does an N-parameter fp16 model fit?" for the weights alone, for
 * inference (x1.2) and for mixed-precision training (16 bytes/parameter),
 * with gpuprobe_capacity_bytes().
 *
 * The installed command gpuprobe-fit(1) covers every dtype and JSON.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdint.h>

enum { OPT_PARAMS };
static const cli_option options[] = {
    [OPT_PARAMS] = {"params", "N", "does an N-parameter fp16 model fit, and where (7e9 ok)", 0},
    {NULL, NULL, NULL, 0},
};
static const cli_command command = {
    .name = "vram_capacity",
    .summary = "The largest fp16 model each device holds, or whether a given one fits.",
    .options = options,
    .exit1 = "a device query failed",
    .footer = "The installed command: gpuprobe-fit.",
};

int main(int argc, char **argv)
{
    cli_start(&command, argc, argv);
    uint64_t params = 0;
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0)
        if (cli_parse_count(v, GPUPROBE_MAX_PARAMS, &params) != 0 || params == 0)
            return cli_finish(cli_bad_value(v, "--params wants a parameter count from 1 to 1e15 (7e9)"));
    if (opt == CLI_ARGS_EXIT)
        return cli_finish(a.status);

    gpuprobe_context *ctx;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK)
        return cli_finish(cli_fail(NULL, st, "creating a context"));

    size_t count = 0;
    gpuprobe_device_count(ctx, &count);
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < count; i++) {
        const char *spec = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &spec);
        gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
        st = gpuprobe_device_capacity(ctx, i, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap);
        if (st != GPUPROBE_OK && st != GPUPROBE_ERR_OVERFLOW) {
            cli_report(ctx, st, "%s: capacity", spec);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        char usable[32], total[32], count_s[32];
        gp_format_bytes(usable, sizeof usable, cap.usable_bytes);
        gp_format_bytes(total, sizeof total, cap.total_bytes);
        cli_line("%s: %s usable of %s total (%s)", spec, usable, total,
                 cap.reserve_source == GPUPROBE_RESERVE_NONE ? "available RAM"
                 : cap.reserve_source == GPUPROBE_RESERVE_MEASURED ? "free minus the measured CUDA context"
                 : cap.reserve_source == GPUPROBE_RESERVE_CONTEXT_HELD ? "free inside this process's CUDA context"
                                                                       : "free minus a default CUDA context reserve");
        if (!params) {
            gp_format_count(count_s, sizeof count_s, cap.max_params);
            cli_line("  largest fp16 model: %s parameters%s", count_s,
                     st == GPUPROBE_ERR_OVERFLOW ? " (more than 10^15)" : "");
            continue;
        }
        static const gpuprobe_workload w[] = {GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_WORKLOAD_INFERENCE,
                                              GPUPROBE_WORKLOAD_TRAINING};
        for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
            uint64_t need = 0;
            gpuprobe_capacity_bytes(params, GPUPROBE_DTYPE_FP16, w[k], &need);
            char need_s[32];
            gp_format_bytes(need_s, sizeof need_s, need);
            cli_line("  fp16 %-9s needs %9s: %s", gpuprobe_workload_name(w[k]), need_s,
                     need <= cap.usable_bytes ? "fits" : "does not fit");
        }
    }
    gpuprobe_context_destroy(ctx);
    return cli_finish(rc);
}
