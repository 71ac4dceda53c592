/*
 * plan_model.c - the plan of a Hugging Face config.json under a workload, as
 * one JSON object: what the benchmark scripts (scripts/bench-fit, the fit
 * part of scripts/gpu-check) compare with a real run. Pure arithmetic
 * (gpuprobe_plan_compute()): no device is looked at.
 *
 * Usage: plan_model CONFIG.json [--workload weights|inference|training]
 *          [--weights-dtype D] [--kv-dtype D] [--context N] [--batch N]
 *          [--chunk N] [--checkpointing] [--group N] [--gpus N]
 *          [--overhead BYTES] [--margin BYTES]
 *
 * Exit status: 0, 1 (the config or the plan failed: one line on stderr),
 * 2 (usage).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "gpuprobe.h"
#include "model_config.h"

static const char *prog = "plan_model";

static int usage(const char *msg, const char *arg)
{
    fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "usage: %s CONFIG.json [--workload weights|inference|training] "
                    "[--weights-dtype D] [--kv-dtype D] [--context N] [--batch N] "
                    "[--chunk N] [--checkpointing] [--group N] [--gpus N] "
                    "[--overhead BYTES] [--margin BYTES]\n", prog);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    static const cli_command command = {.name = "plan_model", .summary = "", .exit1 = ""};
    cli_start(&command, argc, argv);
    static const struct {
        const char *flag;
        gpuprobe_plan_param param;
    } numeric[] = {
        {"--context", GPUPROBE_PLAN_CONTEXT}, {"--batch", GPUPROBE_PLAN_BATCH},
        {"--chunk", GPUPROBE_PLAN_PREFILL_CHUNK}, {"--group", GPUPROBE_PLAN_QUANT_GROUP},
        {"--gpus", GPUPROBE_PLAN_GPUS}, {"--overhead", GPUPROBE_PLAN_OVERHEAD},
        {"--margin", GPUPROBE_PLAN_MARGIN},
    };
    if (argc < 2 || argv[1][0] == '-')
        return usage("no config", NULL);
    gpuprobe_plan_options *o = NULL;
    if (gpuprobe_plan_options_create(&o) != GPUPROBE_OK)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_OK;
    for (int i = 2; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int known = 0;
        if (strcmp(a, "--checkpointing") == 0) {
            gpuprobe_plan_options_set(o, GPUPROBE_PLAN_CHECKPOINTING, 1);
            continue;
        }
        if (!v) {
            rc = usage("missing value", a);
            break;
        }
        for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; k++) {
            uint64_t n;
            if (strcmp(a, numeric[k].flag) != 0)
                continue;
            known = 1;
            if (cli_parse_count(v, INT64_MAX, &n) != 0 ||
                gpuprobe_plan_options_set(o, numeric[k].param, (int64_t)n) != GPUPROBE_OK)
                rc = usage("value out of range", a);
        }
        if (strcmp(a, "--weights-dtype") == 0 || strcmp(a, "--kv-dtype") == 0) {
            gpuprobe_dtype d;
            known = 1;
            if (gpuprobe_dtype_parse(v, &d) != GPUPROBE_OK)
                rc = usage("unknown dtype", v);
            else
                gpuprobe_plan_options_set(o, a[2] == 'w' ? GPUPROBE_PLAN_WEIGHTS_DTYPE
                                                         : GPUPROBE_PLAN_KV_DTYPE, d);
        }
        if (strcmp(a, "--workload") == 0) {
            known = 1;
            int w = -1;
            for (int k = GPUPROBE_WORKLOAD_WEIGHTS; k <= GPUPROBE_WORKLOAD_TRAINING; k++)
                if (strcmp(v, gpuprobe_workload_name((gpuprobe_workload)k)) == 0)
                    w = k;
            if (w < 0)
                rc = usage("unknown workload", v);
            else
                gpuprobe_plan_options_set(o, GPUPROBE_PLAN_WORKLOAD, w);
        }
        if (!known)
            rc = usage("unknown argument", a);
        i++;
    }
    gpuprobe_model *m = NULL;
    char err[600];
    if (rc == CLI_EXIT_OK && ex_model_config_load(argv[1], &m, err, sizeof err) != GPUPROBE_OK) {
        fprintf(stderr, "%s: %s\n", prog, err);
        rc = CLI_EXIT_FAIL;
    }
    gpuprobe_context *ctx = NULL;
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    gpuprobe_status st;
    if (rc == CLI_EXIT_OK && gpuprobe_context_create(&ctx, 0) == GPUPROBE_OK &&
        (st = gpuprobe_plan_compute(ctx, m, o, 0, &p)) != GPUPROBE_OK) {
        cli_report(ctx, st, "plan");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) {
        char *cfg = cli_utf8_clean(argv[1]);
        struct json_object *name = cli_string(cfg ? cfg : "");
        printf("{\"config\": %s", json_object_to_json_string(name));
        json_object_put(name);
        free(cfg);
        printf(", \"params\": %llu, \"active_params\": %llu, "
               "\"kv_bytes_per_token\": %llu, \"weights_bytes\": %llu, "
               "\"gradient_bytes\": %llu, \"optimizer_bytes\": %llu, "
               "\"kv_cache_bytes\": %llu, \"activation_bytes\": %llu, "
               "\"overhead_bytes\": %llu, \"margin_bytes\": %llu, "
               "\"total_bytes\": %llu, \"flags\": %u}\n",
               (unsigned long long)p.params, (unsigned long long)p.active_params,
               (unsigned long long)p.kv_bytes_per_token,
               (unsigned long long)p.weights_bytes,
               (unsigned long long)p.gradient_bytes,
               (unsigned long long)p.optimizer_bytes,
               (unsigned long long)p.kv_cache_bytes,
               (unsigned long long)p.activation_bytes,
               (unsigned long long)p.overhead_bytes,
               (unsigned long long)p.margin_bytes,
               (unsigned long long)p.total_bytes, p.flags);
    }
    gpuprobe_context_destroy(ctx);
    gpuprobe_model_destroy(m);
    gpuprobe_plan_options_destroy(o);
    return rc;
}
