/*
 * model_fit.c - beyond the lesson: will a real model fit here, at a real
 * context length, and on how many GPUs? By default Llama-3.1-8B at 8192
 * tokens (its shipped config, examples/models/).
 *
 * The model comes from its config.json (the commands' reader,
 * tools/common/model.h: a path, a directory, a Hugging Face id in the
 * local hub cache, or a shipped name); the library makes the plan: weights,
 * KV cache, activations, the CUDA context and a margin, held against each
 * device's memory (gpuprobe_plan_device()), and the fewest GPUs that hold
 * it with tensor parallelism (gpuprobe_plan_gpus()).
 *
 * The installed command gpuprobe-fit(1) --model shows the whole breakdown.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdint.h>

enum { OPT_MODEL, OPT_CONTEXT };
static const cli_option options[] = {
    [OPT_MODEL] = {"model", "M", "the model (default Llama-3.1-8B): a config.json, a Hugging Face id, a shipped name"},
    [OPT_CONTEXT] = {"context", "N", "tokens per sequence (default 8192)"},
    {NULL, NULL, NULL},
};
static const cli_command command = {
    .name = "model_fit",
    .summary = "Will this model fit here at this context, and on how many GPUs?",
    .options = options,
    .exit1 = "it fits nowhere, or a query failed",
    .footer = "The installed command: gpuprobe-fit --model.",
};

int main(int argc, char **argv)
{
    cli_start(&command, argc, argv);
    const char *name = "Llama-3.1-8B", *context = "8192";
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0)
        *(opt == OPT_MODEL ? &name : &context) = v;
    if (opt == CLI_ARGS_EXIT)
        return cli_finish(a.status);

    /* The model, from its config.json; the workload: batch 1 at this context. */
    cli_workload w = CLI_WORKLOAD_INIT;
    cli_model_found found;
    cli_model_config cfg;
    gpuprobe_plan_options *opts = NULL;
    int rc = cli_workload_option(&w, "context", context);
    if (rc == CLI_EXIT_OK)
        rc = cli_model_open(name, &found, &cfg);
    if (rc == CLI_EXIT_OK && (rc = cli_workload_options(&w, &cfg, &opts)) != CLI_EXIT_OK)
        cli_model_config_free(&cfg);
    if (rc != CLI_EXIT_OK)
        return cli_finish(rc);

    gpuprobe_context *ctx;
    gpuprobe_status st;
    if ((st = gpuprobe_context_create(&ctx, 0)) != GPUPROBE_OK)
        return cli_finish(cli_fail(NULL, st, "creating a context"));
    gpuprobe_plan pure = GPUPROBE_PLAN_INIT;
    if ((st = gpuprobe_plan_compute(ctx, cfg.model, opts, 0, &pure)) != GPUPROBE_OK)
        rc = cli_fail(ctx, st, "planning %s", name);
    char n[32], kv[32];
    gp_format_count(n, sizeof n, pure.params);
    gp_format_bytes(kv, sizeof kv, pure.kv_cache_bytes);
    if (rc == CLI_EXIT_OK)
        cli_line("%s: %s parameters; %s tokens of KV cache take %s", name, n, context, kv);

    /* Each device: does it hold the whole model? */
    size_t count = 0;
    int fits = 0;
    gpuprobe_device_count(ctx, &count);
    for (size_t i = 0; rc == CLI_EXIT_OK && i < count; i++) {
        const char *spec = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &spec);
        gpuprobe_plan p = GPUPROBE_PLAN_INIT;
        if ((st = gpuprobe_plan_device(ctx, i, cfg.model, opts, 0, &p)) != GPUPROBE_OK) {
            cli_report(ctx, st, "%s: plan", spec);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        char need[32], have[32];
        gp_format_bytes(need, sizeof need, p.total_bytes);
        gp_format_bytes(have, sizeof have, p.available_bytes);
        cli_line("  %-7s needs %9s of %9s: %s (up to %llu tokens)", spec, need, have,
                 p.fits ? "fits" : "does not fit", (unsigned long long)p.largest_context);
        fits |= p.fits != 0;
    }

    /* The fewest GPUs that hold it, split with tensor parallelism. */
    size_t gpus = 0, devs[64];
    st = rc == CLI_EXIT_OK ? gpuprobe_plan_gpus(ctx, cfg.model, opts, 0, &gpus, devs, 64)
                           : GPUPROBE_ERR_INTERNAL;
    if (st == GPUPROBE_OK) {
        cli_put("  on GPUs: %zu (", gpus);
        for (size_t i = 0; i < gpus && i < 64; i++) {
            const char *spec = "?";
            gpuprobe_device_get_string(ctx, devs[i], GPUPROBE_ATTR_SPEC, &spec);
            cli_put("%s%s", i ? ", " : "", spec);
        }
        cli_line(")");
        fits = 1;
    } else if (rc == CLI_EXIT_OK) {
        cli_line("  on GPUs: none (%s)", gpuprobe_last_error(ctx));
    }
    gpuprobe_context_destroy(ctx);
    gpuprobe_plan_options_destroy(opts);
    cli_model_config_free(&cfg);
    return cli_finish(rc == CLI_EXIT_OK && !fits ? CLI_EXIT_FAIL : rc);
}
