/*
 * matmul_bench.c - the lesson's "Build It: GPU vs CPU benchmark": an N x N
 * matrix multiplication (N = 5000) timed on the CPU and on the best GPU, and
 * the speedup.
 *
 * gpuprobe_matmul_run() follows a protocol that the lesson's two
 * time.time() calls do not: seeded random inputs, setup (allocation,
 * handles, transfers) timed apart, warm-up, the median of several timed
 * runs (CUDA events on a GPU), and the result verified against a
 * double-precision reference. Options go in through enum-keyed setters,
 * results come out through enum-keyed getters.
 *
 * The installed command gpuprobe-bench(1) adds devices, precisions (the
 * tensor-core table), run and thread counts, and JSON.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdint.h>

enum { OPT_SIZE };
static const cli_option options[] = {
    [OPT_SIZE] = {"size", "N", "multiply N x N matrices (default 5000, the lesson's size)", 0},
    {NULL, NULL, NULL, 0},
};
static const cli_command command = {
    .name = "matmul_bench",
    .summary = "Time an N x N matrix multiplication on the CPU and the best GPU.",
    .options = options,
    .exit1 = "a run failed or did not verify",
    .footer = "The installed command: gpuprobe-bench.",
};

/* Time fp32 on one device; print it; return the median (0 on failure). */
static double run(gpuprobe_context *ctx, size_t device, const char *label, int64_t n)
{
    gpuprobe_matmul_options *opts;
    gpuprobe_matmul_result *res = NULL;
    gpuprobe_status st = gpuprobe_matmul_options_create(&opts);
    if (st == GPUPROBE_OK) {
        gpuprobe_matmul_options_set(opts, GPUPROBE_MATMUL_M, n); /* N x N x N */
        gpuprobe_matmul_options_set(opts, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP32);
        st = gpuprobe_matmul_run(ctx, device, opts, 0, &res);
        gpuprobe_matmul_options_destroy(opts);
    }
    if (st != GPUPROBE_OK) {
        cli_report(ctx, st, "matmul on %s", label);
        return 0;
    }
    double median = 0, gflops = 0, setup = 0;
    int64_t verified = 0;
    const char *backend = "";
    gpuprobe_matmul_result_get_double(res, GPUPROBE_METRIC_MEDIAN_S, &median);
    gpuprobe_matmul_result_get_double(res, GPUPROBE_METRIC_GFLOPS, &gflops);
    gpuprobe_matmul_result_get_double(res, GPUPROBE_METRIC_SETUP_S, &setup);
    gpuprobe_matmul_result_get_int(res, GPUPROBE_METRIC_VERIFIED, &verified);
    gpuprobe_matmul_result_get_string(res, GPUPROBE_METRIC_BACKEND, &backend);
    /* A run of a small size is a batch of calls timed together: the
     * figures are per call. */
    char t[32], s[32], runs[64];
    cli_seconds(t, sizeof t, median);
    cli_seconds(s, sizeof s, setup);
    cli_runs(runs, sizeof runs, res);
    cli_line("%s: %s  (%s, %.1f GFLOP/s, %s; setup %s; %s)", label, t, runs, gflops,
             verified > 0 ? "verified" : "NOT VERIFIED", s, backend);
    gpuprobe_matmul_result_destroy(res);
    return verified > 0 ? median : 0;
}

int main(int argc, char **argv)
{
    cli_start(&command, argc, argv);
    uint64_t n = 5000;
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0)
        if (cli_parse_count(v, 100000, &n) != 0 || n == 0)
            return cli_finish(cli_bad_value(v, "--size wants a whole number from 1 to 100000"));
    if (opt == CLI_ARGS_EXIT)
        return cli_finish(a.status);

    gpuprobe_context *ctx;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK)
        return cli_finish(cli_fail(NULL, st, "creating a context"));

    cli_line("Matrix multiply %llu x %llu, fp32:", (unsigned long long)n, (unsigned long long)n);
    double cpu = run(ctx, 0, "CPU", (int64_t)n); /* device 0: the CPU */
    int rc = cpu > 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;

    gpuprobe_cuda_cause cause;
    const char *detail;
    gpuprobe_cuda_status(ctx, &cause, &detail);
    size_t gpu_device;
    if (cause != GPUPROBE_CUDA_AVAILABLE) {
        cli_line("GPU: not available (%s: %s)", gpuprobe_cuda_cause_string(cause), detail);
    } else if ((st = gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &gpu_device,
                                     NULL)) != GPUPROBE_OK) {
        rc = cli_fail(ctx, st, "choosing a GPU"); /* the one with the most free memory */
    } else {
        double gpu = run(ctx, gpu_device, "GPU", (int64_t)n);
        if (gpu > 0 && cpu > 0)
            cli_line("Speedup: %.*fx", cpu / gpu >= 10 ? 0 : 1, cpu / gpu);
        else
            rc = CLI_EXIT_FAIL;
    }
    gpuprobe_context_destroy(ctx);
    return cli_finish(rc);
}
