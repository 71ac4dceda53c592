/*
 * gpuprobe-select - which device should a program use: the lesson's
 *
 *     device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
 *
 * with a reason for the choice, optional requirements (a model among them:
 * --model, the device where its plan leaves the most room), and the
 * GPUPROBE_DEVICE override. The GPUs are judged through NVML: choosing
 * creates no CUDA context (GPUPROBE_NVML=off makes the library read memory
 * through contexts instead, the way to compare the two). See
 * gpuprobe-select(1) and docs/json.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

enum {
    OPT_DEVICE, OPT_MIN_FREE, OPT_MIN_CC, OPT_FIT, OPT_DTYPE, OPT_WORKLOAD, OPT_MAX_UTIL,
    OPT_NO_OTHER, OPT_MODEL, OPT_CONTEXT, OPT_BATCH, OPT_WEIGHTS_DTYPE, OPT_KV_DTYPE, OPT_MARGIN,
    OPT_JSON
};

static const cli_option options[] = {
    [OPT_DEVICE] = {"device", "SPEC", "auto (default), cpu, cuda or cuda:N; GPUPROBE_DEVICE overrides it", 0},
    [OPT_MIN_FREE] = {"min-free", "BYTES", "the device must have this much free memory (7e9 ok)", 0},
    [OPT_MIN_CC] = {"min-cc", "X.Y", "a CUDA device of at least this compute capability (never the CPU)", 0},
    [OPT_FIT] = {"fit", "PARAMS", "the device must hold this many parameters (7e9 ok)", 0},
    [OPT_DTYPE] = {"dtype", "D", "with --fit: fp32, fp64, tf32, fp16 (default), bf16, fp8, int8, int4", 0},
    [OPT_WORKLOAD] = {"workload", "W", "with --fit: weights (default), inference or training; "
                                       "with --model: inference (default), training, weights", 0},
    [OPT_MAX_UTIL] = {"max-utilization", "PERCENT", "a GPU busy at most this much now (0-100; never the CPU)", 0},
    [OPT_NO_OTHER] = {"no-other-process", NULL, "a GPU on which no other process has a CUDA context (never the CPU)", 0},
    [OPT_MODEL] = {"model", "M", "the device must hold this model (as gpuprobe-fit --model); the "
                                 "most room left wins", 0},
    [OPT_CONTEXT] = CLI_OPTION_CONTEXT,
    [OPT_BATCH] = CLI_OPTION_BATCH,
    [OPT_WEIGHTS_DTYPE] = CLI_OPTION_WEIGHTS_DTYPE,
    [OPT_KV_DTYPE] = CLI_OPTION_KV_DTYPE,
    [OPT_MARGIN] = CLI_OPTION_MARGIN,
    [OPT_JSON] = {"json", NULL, "print one JSON object instead of text", 0},
    {NULL, NULL, NULL, 0},
};

static struct {
    const char *spec;
    gpuprobe_requirements req;
    gpuprobe_dtype dtype;
    gpuprobe_workload workload;
    int have_req, have_fit_opts, have_model_opts;
    const char *model;      /* --model as given */
    cli_model_found found;  /* where its config is */
    cli_model_config cfg;   /* the config read */
    cli_workload w;
    gpuprobe_plan_options *plan;
} args = {"auto", GPUPROBE_REQUIREMENTS_INIT, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS,
          0, 0, 0, NULL, {{0}, 0}, {0}, CLI_WORKLOAD_INIT, NULL};

static int option(int opt, const char *v)
{
    if (opt >= OPT_CONTEXT && opt <= OPT_MARGIN) {
        args.have_model_opts = 1;
        return cli_workload_option(&args.w, options[opt].name, v);
    }
    gpuprobe_requirements *req = &args.req;
    int major = 0, minor = 0;
    uint64_t pct = 0;
    switch (opt) {
    case OPT_DEVICE:
        args.spec = v;
        return CLI_EXIT_OK;
    case OPT_MIN_FREE:
        if (cli_parse_size(v, UINT64_C(1) << 62, &req->min_free_bytes) != 0)
            return cli_bad_value(v, "--min-free wants a size in bytes (20GB, 20GiB, 2e10)");
        break;
    case OPT_MIN_CC:
        if (cli_parse_cc(v, &major, &minor) != 0)
            return cli_bad_value(v, "--min-cc wants a compute capability X.Y");
        /* Every CUDA device has at least 1.0; asking for less still asks
         * for a CUDA device (the library excludes the CPU when the major
         * number is above 0). */
        req->min_cc_major = major < 1 ? 1 : major;
        req->min_cc_minor = major < 1 ? 0 : minor;
        break;
    case OPT_FIT:
        if (cli_parse_count(v, GPUPROBE_MAX_PARAMS, &req->fit_params) != 0 || req->fit_params == 0)
            return cli_bad_value(v, "--fit wants a parameter count from 1 to 1e15 (7e9)");
        break;
    case OPT_DTYPE:
        if (gpuprobe_dtype_parse(v, &args.dtype) != GPUPROBE_OK)
            return cli_bad_dtype(v, "dtype", GP_DTYPES_ALL, "");
        args.have_fit_opts = 1;
        return CLI_EXIT_OK;
    case OPT_WORKLOAD:
        if (cli_parse_workload(v, &args.workload) != 0)
            return cli_bad_value(v, "--workload wants weights, inference or training");
        args.have_fit_opts = 1;
        args.w.workload = args.workload;
        return CLI_EXIT_OK;
    case OPT_MODEL:
        args.model = v;
        break;
    case OPT_MAX_UTIL:
        if (cli_parse_count(v, 100, &pct) != 0)
            return cli_bad_value(v, "--max-utilization wants a percent from 0 to 100");
        req->max_utilization = (int32_t)pct;
        break;
    case OPT_NO_OTHER:
        req->no_other_process = 1;
        break;
    }
    args.have_req = 1;
    return CLI_EXIT_OK;
}

/* --model: the config found and read, the workload; the model becomes a
 * requirement (ABI 1.2: fit_model, fit_plan). */
static int check_model(void)
{
    int rc = cli_model_open(args.model, &args.found, &args.cfg);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_workload_options(&args.w, &args.cfg, &args.plan);
    if (rc != CLI_EXIT_OK) {
        cli_model_config_free(&args.cfg); /* the program ends here */
        return rc;
    }
    args.req.fit_model = args.cfg.model;
    args.req.fit_plan = args.plan;
    return CLI_EXIT_OK;
}

/* --fit, --dtype, --workload. */
static int check_fit(void)
{
    if (args.have_fit_opts && args.req.fit_params == 0)
        return cli_usage_error("--dtype and --workload go with --fit");
    if (args.req.fit_params && !cli_have_rule(args.dtype, args.workload))
        return cli_usage_error("there is no %s rule for %s (training: %s)",
                               gpuprobe_workload_name(args.workload), gpuprobe_dtype_name(args.dtype),
                               cli_training_dtypes());
    args.req.fit_dtype = (int32_t)args.dtype;
    args.req.fit_workload = (int32_t)args.workload;
    return CLI_EXIT_OK;
}

static int check(void)
{
    if (args.have_model_opts && !args.model)
        return cli_usage_error("--context, --batch, --weights-dtype, --kv-dtype and --margin go "
                               "with --model");
    if (args.model) {
        int rc = check_model();
        if (rc != CLI_EXIT_OK)
            return rc;
        if (!args.req.fit_params) /* --workload was the model's */
            args.have_fit_opts = 0;
    }
    int rc = check_fit();
    if (rc != CLI_EXIT_OK) { /* the program ends here */
        gpuprobe_plan_options_destroy(args.plan);
        cli_model_config_free(&args.cfg);
    }
    return rc;
}

static int print(gpuprobe_context *ctx, size_t dev, const char *why)
{
    const char *dspec = NULL, *name = NULL;
    gpuprobe_status st = gpuprobe_device_get_string(ctx, dev, GPUPROBE_ATTR_SPEC, &dspec);
    if (st == GPUPROBE_OK)
        st = gpuprobe_device_get_string(ctx, dev, GPUPROBE_ATTR_NAME, &name);
    if (st != GPUPROBE_OK)
        return cli_fail(ctx, st, "describing device %zu", dev);
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = "";
    gpuprobe_cuda_status(ctx, &cause, &detail);
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    if (args.model && (st = gpuprobe_plan_device(ctx, dev, args.cfg.model, args.plan, 0, &p)) != GPUPROBE_OK)
        return cli_fail(ctx, st, "planning %s on %s", args.model, dspec);
    if (cli_json()) {
        struct json_object *doc = cli_doc();
        cli_set_str(doc, "using", dspec);
        cli_set_u64(doc, "device_index", dev);
        cli_set_str(doc, "name", name);
        cli_set_str(doc, "choice_reason", why);
        cli_cuda_json(doc, cause, detail);
        if (args.model) {
            struct json_object *m = cli_obj();
            cli_set_str(m, "name", args.model);
            cli_set_str(m, "config", args.found.path);
            cli_set_u64(m, "params", p.params);
            cli_set(m, "plan", cli_plan_json(&p));
            cli_set_u64(m, "available_bytes", p.available_bytes);
            cli_set_u64(m, "headroom_bytes", p.available_bytes - p.total_bytes);
            cli_set(doc, "model", m);
        }
        return cli_print_doc(doc);
    }
    cli_line("Using: %s", dspec);
    cli_line("Device: %s", name);
    cli_line("Reason: %s", why);
    if (args.model) {
        char need[32], have[32];
        gp_format_bytes(need, sizeof need, p.total_bytes);
        gp_format_bytes(have, sizeof have, p.available_bytes);
        cli_line("Model: %s needs %s of the %s available there (gpuprobe-fit --model for the "
                 "breakdown)", args.model, need, have);
    }
    return CLI_EXIT_OK;
}

static int choose(gpuprobe_context *ctx)
{
    size_t dev = 0;
    const char *reason = NULL;
    gpuprobe_status st = gpuprobe_select(ctx, args.spec, args.have_req ? &args.req : NULL, 0, &dev,
                                         &reason);
    if (st != GPUPROBE_OK) {
        int rc = cli_fail(ctx, st, "selecting a device");
        /* A malformed spec (--device or GPUPROBE_DEVICE) is bad input. */
        return st == GPUPROBE_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : rc;
    }
    /* The reason lasts until the next call on the context: copy it. */
    char why[1024];
    snprintf(why, sizeof why, "%s", reason ? reason : "");
    return print(ctx, dev, why);
}

static int run(gpuprobe_context *ctx)
{
    int rc = choose(ctx);
    gpuprobe_plan_options_destroy(args.plan);
    cli_model_config_free(&args.cfg);
    return rc;
}

static const cli_command command = {
    "gpuprobe-select",
    "Choose the device a program should use (the best usable GPU, else the\n"
    "CPU) and say why; with requirements, only a device that meets them; with\n"
    "--model, the device where the model fits with the most room.",
    options,
    "no device meets the requirements, or CUDA was asked for and is not usable",
    "See gpuprobe-select(1).",
    option,
    check,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
