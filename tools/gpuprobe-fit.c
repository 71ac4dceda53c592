/*
 * gpuprobe-fit - will this model fit? With --model, a model's own config
 * (a config.json, a directory, a Hugging Face id in the local hub cache,
 * or a shipped config; never the network) planned against every device:
 * weights, KV cache, activations, runtime overhead and margin, with the
 * largest context and batch that fit and the fewest GPUs (tools/fit/plan.c).
 * Without it, the lesson's exercise 3, "estimate the largest model you can
 * fit (rule of thumb: 2 bytes per parameter for fp16)", for every device,
 * dtype and workload, against the memory that is really usable; or, with
 * --params, whether a given model fits and where. See gpuprobe-fit(1) and
 * docs/json.md.
 *
 * Rules (gpuprobe.h): weights = dtype size per parameter (the lesson's
 * rule); inference = weights x 1.2 (EleutherAI, "Transformer Math 101");
 * training = AdamW mixed precision, 16 bytes per parameter before
 * activations. A GPU's usable memory is its free memory minus the CUDA
 * context's cost (measured when possible, else a 512 MiB default), in whole
 * 2 MiB pages less the driver's allowance; the CPU's is the available RAM
 * (cgroup-aware).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_MODEL, OPT_CONTEXT, OPT_BATCH, OPT_WEIGHTS_DTYPE, OPT_KV_DTYPE, OPT_WORKLOAD, OPT_GPUS,
    OPT_DEVICE, OPT_MARGIN, OPT_MAX_CONTEXT, OPT_MAX_BATCH, OPT_LIST_MODELS, OPT_PARAMS, OPT_DTYPE,
    OPT_PROMPT, OPT_GENERATE, OPT_LAYER_OVERHEAD, OPT_SPEED_BUDGET, OPT_SPEED_BYTES, OPT_THREADS,
    OPT_ROOFLINE, OPT_JSON
};

static const cli_option options[] = {
    [OPT_MODEL] = {"model", "M", "plan this model: a config.json, a directory, a Hugging Face id "
                                 "(local cache only) or a shipped name", 0},
    [OPT_CONTEXT] = CLI_OPTION_CONTEXT,
    [OPT_BATCH] = CLI_OPTION_BATCH,
    [OPT_WEIGHTS_DTYPE] = CLI_OPTION_WEIGHTS_DTYPE,
    [OPT_KV_DTYPE] = CLI_OPTION_KV_DTYPE,
    [OPT_WORKLOAD] = {"workload", "W", "inference (--model's default), training or weights; "
                                       "without --model: only this workload", 0},
    [OPT_GPUS] = {"gpus", "N|all", "with --model: split it over N GPUs (tensor parallel)", 0},
    [OPT_DEVICE] = {"device", "SPEC", "only this device: cpu, cuda or cuda:N (default auto: every "
                                      "device)", 0},
    [OPT_MARGIN] = CLI_OPTION_MARGIN,
    [OPT_MAX_CONTEXT] = {"max-context", NULL, "with --model: plan at the largest context that "
                                              "fits the best device", 0},
    [OPT_MAX_BATCH] = {"max-batch", NULL, "with --model: plan at the largest batch that fits "
                                          "the best device", 0},
    [OPT_LIST_MODELS] = {"list-models", NULL, "list the shipped model configs and where they are", 0},
    [OPT_PARAMS] = {"params", "N", "does an N-parameter model fit, and where (7e9 ok)", 0},
    [OPT_DTYPE] = {"dtype", "D", "only this dtype (fp32, fp64, tf32, fp16, bf16, fp8, int8, int4); "
                                 "with --model: --weights-dtype", 0},
    [OPT_PROMPT] = {"prompt", "P", "with --model: also estimate the speed on each device, for "
                                   "prompts of P tokens (default 512), measured there", 0},
    [OPT_GENERATE] = {"generate", "G", "with --model: the same, generating G tokens a sequence "
                                       "(default 128)", 0},
    [OPT_LAYER_OVERHEAD] = {"layer-overhead", "US", "with --prompt or --generate: fixed cost of "
                                                    "each layer in each forward pass, in "
                                                    "microseconds (default 5)", 0},
    [OPT_SPEED_BUDGET] = {"speed-budget", "MS", "with --prompt or --generate: timed "
                                                "milliseconds per matmul shape (default 100)", 0},
    [OPT_SPEED_BYTES] = {"speed-bytes", "SIZE", "with --prompt or --generate: the bandwidth "
                                                "measurement's buffer (default: its size rule)",
                         0},
    [OPT_THREADS] = {"threads", "N", "with --prompt or --generate: on a CPU, the threads the "
                                     "engine runs with; the bandwidth and matmuls are measured "
                                     "with N (default: one per core)", 0},
    [OPT_ROOFLINE] = {"roofline", "FILE", "with --prompt or --generate: draw each device's "
                                          "roofline with the model's prefill and decode on it "
                                          "into FILE (.png, .svg or .pdf)", 0},
    [OPT_JSON] = {"json", NULL, "print one JSON object instead of text", 0},
    {NULL, NULL, NULL, 0},
};

static const gpuprobe_dtype all_dtypes[] = {
    GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16,
    GPUPROBE_DTYPE_FP8,  GPUPROBE_DTYPE_INT8, GPUPROBE_DTYPE_INT4,
};

static const gpuprobe_workload workloads[] = {
    GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_WORKLOAD_TRAINING,
};
#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])

static const char *const workload_title[] = {
    "weights only (the lesson's rule: dtype size per parameter)",
    "inference (weights x 1.2, EleutherAI \"Transformer Math 101\")",
    "training (AdamW mixed precision, 16 bytes/param before activations)",
};

static const char *const json_key[] = {"max_params", "max_params_inference", "max_params_training"};

/* The lesson's question: which dtypes and workloads, and a model given by
 * its parameter count (--params). A model described by its config is
 * planned instead (--model, tools/fit/plan.c). */
typedef struct question {
    gpuprobe_dtype dtypes[8];
    size_t n_dtypes;
    int workload_on[N_WORKLOADS];
    int have_params;
    uint64_t params;
} question;

typedef struct devinfo {
    const char *spec, *name;
    int kind;
    gpuprobe_status st; /* of the capacity query */
    char error[512];
    gpuprobe_capacity cap;
} devinfo;

/* Largest count for usable bytes; -1 no rule, 1 above 10^15, 0 ok. */
static int max_params(uint64_t usable, gpuprobe_dtype d, gpuprobe_workload w, uint64_t *out)
{
    gpuprobe_status st = gpuprobe_capacity_params(usable, d, w, out);
    if (st == GPUPROBE_ERR_OVERFLOW)
        return 1;
    return st == GPUPROBE_OK ? 0 : -1;
}

/* Bytes the model needs for (d, w); 0 when there is no rule. */
static int needs(const question *q, gpuprobe_dtype d, gpuprobe_workload w, uint64_t *bytes)
{
    return gpuprobe_capacity_bytes(q->params, d, w, bytes) == GPUPROBE_OK;
}

/* ---- text ---- */

static void text_device(const question *q, const devinfo *d, int *fits_anywhere)
{
    char a[32], b[32], c[32];
    cli_line("%s (%s)", d->spec, d->name);
    if (d->st != GPUPROBE_OK) {
        cli_line("  memory: unknown (the query failed: %s)", gpuprobe_status_string(d->st));
        cli_endl();
        return;
    }
    const gpuprobe_capacity *cap = &d->cap;
    gp_format_bytes(a, sizeof a, cap->total_bytes);
    gp_format_bytes(b, sizeof b, cap->free_bytes);
    cli_line("  memory: %s total, %s %s", a, b, d->kind == GPUPROBE_DEVICE_CPU ? "available" : "free");
    gp_format_bytes(a, sizeof a, cap->usable_bytes);
    gp_format_bytes(c, sizeof c, cap->reserve_bytes);
    /* A GPU keeps back whatever is not in whole 2 MiB pages, and its
     * driver's allowance: what one allocation cannot get. */
    char k[32];
    uint64_t kept = cap->free_bytes - cap->reserve_bytes - cap->usable_bytes;
    gp_format_bytes(k, sizeof k, cap->free_bytes > cap->reserve_bytes ? kept : 0);
    if (cap->reserve_source == GPUPROBE_RESERVE_NONE)
        cli_line("  usable: %s (available RAM, cgroup-aware; nothing reserved)", a);
    else if (cap->reserve_source == GPUPROBE_RESERVE_CONTEXT_HELD)
        cli_line("  usable: %s = %s free (read inside this process's CUDA context, "
                 "which is already counted; nothing more reserved) - %s the driver keeps", a, b, k);
    else
        cli_line("  usable: %s = %s free - %s for the CUDA context (%s) - %s the driver keeps", a,
                 b, c,
                 cap->reserve_source == GPUPROBE_RESERVE_MEASURED ? "measured on this device"
                                                                  : "default reserve: nothing measured",
                 k);
    for (size_t w = 0; w < N_WORKLOADS; w++) {
        if (!q->workload_on[w])
            continue;
        if (!q->have_params)
            cli_line("  %s:", workload_title[w]);
        for (size_t k = 0; k < q->n_dtypes; k++) {
            gpuprobe_dtype dt = q->dtypes[k];
            uint64_t p = 0, need = 0;
            if (q->have_params) {
                if (!needs(q, dt, workloads[w], &need))
                    continue;
                gp_format_bytes(a, sizeof a, need);
                cli_put("    %-4s %-9s needs %9s: ", gpuprobe_dtype_name(dt),
                        gpuprobe_workload_name(workloads[w]), a);
                if (need <= cap->usable_bytes) {
                    *fits_anywhere = 1;
                    cli_line("fits");
                } else {
                    gp_format_bytes(b, sizeof b, cap->usable_bytes);
                    cli_line("does not fit (%s usable)", b);
                }
                continue;
            }
            int r = max_params(cap->usable_bytes, dt, workloads[w], &p);
            if (r < 0) {
                cli_line("    %s: no rule", gpuprobe_dtype_name(dt));
            } else if (r > 0) {
                cli_line("    %s: more than 10^15 parameters", gpuprobe_dtype_name(dt));
            } else {
                gp_format_count(a, sizeof a, p);
                cli_line("    %s: %s parameters", gpuprobe_dtype_name(dt), a);
            }
        }
    }
    /* What the lesson's rule on total memory would have said. */
    uint64_t naive = 0;
    if (!q->have_params && d->kind != GPUPROBE_DEVICE_CPU &&
        max_params(cap->total_bytes, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, &naive) == 0) {
        gp_format_count(a, sizeof a, naive);
        cli_line("  (total / 2 bytes would say %s fp16 parameters; not all of the total is usable)", a);
    }
    cli_endl();
}

static void print_text(const question *q, const devinfo *di, size_t n, int *fits_anywhere)
{
    if (q->have_params) {
        char a[32];
        gp_format_count(a, sizeof a, q->params);
        cli_line("Does a %s-parameter model fit? (%llu parameters)", a, (unsigned long long)q->params);
        cli_endl();
    }
    for (size_t i = 0; i < n; i++)
        text_device(q, &di[i], fits_anywhere);
}

/* ---- JSON ---- */

static struct json_object *json_device(const question *q, const devinfo *d)
{
    struct json_object *o = cli_obj();
    cli_set_str(o, "device", d->spec);
    cli_set_str(o, "name", d->name);
    if (d->st != GPUPROBE_OK) {
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(d->st), d->error));
        return o;
    }
    cli_set_null(o, "error");
    const gpuprobe_capacity *cap = &d->cap;
    cli_set_u64(o, "total_bytes", cap->total_bytes);
    cli_set_u64(o, "free_bytes", cap->free_bytes);
    cli_set_u64(o, "reserve_bytes", cap->reserve_bytes);
    cli_set_str(o, "reserve_source", cli_reserve_name(cap->reserve_source));
    cli_set_u64(o, "usable_bytes", cap->usable_bytes);
    for (size_t w = 0; w < N_WORKLOADS; w++) {
        if (!q->workload_on[w])
            continue;
        struct json_object *m = cli_obj();
        for (size_t k = 0; k < q->n_dtypes; k++) {
            uint64_t p = 0;
            int r = max_params(cap->usable_bytes, q->dtypes[k], workloads[w], &p);
            if (r > 0)
                cli_set_null(m, gpuprobe_dtype_name(q->dtypes[k]));
            else if (r == 0)
                cli_set_u64(m, gpuprobe_dtype_name(q->dtypes[k]), p);
        }
        cli_set(o, json_key[w], m);
    }
    return o;
}

static int print_json(const question *q, const devinfo *di, size_t n, int *fits_anywhere)
{
    struct json_object *doc = cli_doc();
    struct json_object *devices = cli_arr();
    for (size_t i = 0; i < n; i++)
        cli_push(devices, json_device(q, &di[i]));
    cli_set(doc, "devices", devices);
    if (q->have_params) {
        struct json_object *fits = cli_arr();
        for (size_t i = 0; i < n; i++) {
            const devinfo *d = &di[i];
            for (size_t w = 0; d->st == GPUPROBE_OK && w < N_WORKLOADS; w++) {
                for (size_t k = 0; q->workload_on[w] && k < q->n_dtypes; k++) {
                    uint64_t need = 0;
                    if (!needs(q, q->dtypes[k], workloads[w], &need))
                        continue;
                    struct json_object *f = cli_obj();
                    cli_set_str(f, "device", d->spec);
                    cli_set_str(f, "dtype", gpuprobe_dtype_name(q->dtypes[k]));
                    cli_set_str(f, "workload", gpuprobe_workload_name(workloads[w]));
                    cli_set_u64(f, "bytes_needed", need);
                    cli_set_u64(f, "usable_bytes", d->cap.usable_bytes);
                    cli_set_bool(f, "fits", need <= d->cap.usable_bytes);
                    *fits_anywhere |= need <= d->cap.usable_bytes;
                    cli_push(fits, f);
                }
            }
        }
        cli_set_u64(doc, "params", q->params);
        cli_set(doc, "fits", fits);
        cli_set_bool(doc, "fits_anywhere", *fits_anywhere);
    }
    return cli_print_doc(doc);
}

/* One capacity query per device, so that every figure uses the same
 * snapshot; the per-dtype answers come from capacity_params(). Returns 1
 * when a query failed (reported). */
static int query(gpuprobe_context *ctx, devinfo *d, size_t i)
{
    int64_t kind = 0;
    d->spec = d->name = "?";
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &d->spec);
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &d->name);
    gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_KIND, &kind);
    d->kind = (int)kind;
    d->cap = (gpuprobe_capacity)GPUPROBE_CAPACITY_INIT;
    d->st = gpuprobe_device_capacity(ctx, i, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0, &d->cap);
    if (d->st == GPUPROBE_OK)
        return 0;
    snprintf(d->error, sizeof d->error, "%s", gpuprobe_last_error(ctx));
    cli_report(ctx, d->st, "%s: memory query", d->spec);
    return 1;
}

/* ---- --list-models ---- */

static int list_models(void)
{
    char dirs[3][CLI_MODEL_PATH_MAX];
    const char *from[3];
    size_t nd = cli_model_dirs(dirs, from, 3);
    cli_model_entry *list = NULL;
    long n = cli_model_list(&list);
    if (n < 0)
        return cli_fail(NULL, GPUPROBE_ERR_OUT_OF_MEMORY, "listing the shipped models");
    struct json_object *doc = NULL, *models = NULL, *searched = NULL;
    if (cli_json()) {
        doc = cli_doc();
        models = cli_arr();
        searched = cli_arr();
        for (size_t i = 0; i < nd; i++) {
            struct json_object *d = cli_obj();
            cli_set_str(d, "dir", dirs[i]);
            cli_set_str(d, "from", from[i]);
            cli_push(searched, d);
        }
    } else {
        cli_line("Shipped model configs (gpuprobe-fit --model NAME), searched in:");
        for (size_t i = 0; i < nd; i++)
            cli_line("  %s (%s)", dirs[i], from[i]);
        cli_endl();
    }
    int bad = 0;
    for (long i = 0; i < n; i++) {
        cli_model_config c;
        char err[4700], count[32];
        gpuprobe_plan p = GPUPROBE_PLAN_INIT;
        gpuprobe_status st = cli_model_load(list[i].path, &c, err, sizeof err);
        if (st == GPUPROBE_OK && (st = gpuprobe_plan_compute(NULL, c.model, NULL, 0, &p)) != GPUPROBE_OK)
            snprintf(err, sizeof err, "%s: %s", list[i].path, gpuprobe_status_string(st));
        bad |= st != GPUPROBE_OK;
        if (st != GPUPROBE_OK)
            cli_err("%s", err);
        gp_format_count(count, sizeof count, p.params);
        if (models) {
            struct json_object *m = cli_obj();
            cli_set_str(m, "name", list[i].name);
            cli_set_str(m, "config", list[i].path);
            if (st == GPUPROBE_OK) {
                cli_set_null(m, "error");
                cli_set_u64(m, "params", p.params);
                if (c.max_positions)
                    cli_set_u64(m, "max_position_embeddings", c.max_positions);
                else
                    cli_set_null(m, "max_position_embeddings");
                cli_set_str(m, "torch_dtype", c.torch_dtype[0] ? c.torch_dtype : NULL);
            } else {
                cli_set(m, "error", cli_error_obj(gpuprobe_status_name(st), err));
            }
            cli_push(models, m);
        } else if (st == GPUPROBE_OK) {
            cli_line("  %-22s %9s parameters, %7llu positions, %s", list[i].name, count,
                     (unsigned long long)c.max_positions,
                     c.torch_dtype[0] ? c.torch_dtype : "no torch_dtype");
        } else {
            cli_line("  %-22s unreadable (see the message above)", list[i].name);
        }
        if (st == GPUPROBE_OK)
            cli_model_config_free(&c);
    }
    free(list);
    int rc = CLI_EXIT_OK;
    if (doc) {
        cli_set(doc, "models", models);
        cli_set(doc, "searched", searched);
        rc = cli_print_doc(doc);
    } else if (n == 0) {
        cli_line("  (none)");
    }
    return rc == CLI_EXIT_OK && (bad || n == 0) ? CLI_EXIT_FAIL : rc;
}

/* ---- main ---- */

static question q;
static fit_question fq;
static struct {
    int dtype_given, workload_given, list, gpus_given;
    gpuprobe_dtype dtype;
    gpuprobe_workload workload;
    const char *device;
    cli_workload w;
    unsigned model_only; /* bits: options that go with --model */
} args = {0, 0, 0, 0, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, NULL, CLI_WORKLOAD_INIT, 0};

/* The speed options (--prompt and the rest), into fq.sopts. */
static int speed_option(int opt, const char *v)
{
    static const struct {
        gpuprobe_speed_param param;
        uint64_t lo, hi, scale;
        const char *want;
    } k[] = {
        [OPT_PROMPT - OPT_PROMPT] = {GPUPROBE_SPEED_PROMPT, 1, UINT64_C(1) << 32, 1,
                                     "--prompt wants a token count from 1 to 4294967296"},
        [OPT_GENERATE - OPT_PROMPT] = {GPUPROBE_SPEED_GENERATE, 1, UINT64_C(1) << 32, 1,
                                       "--generate wants a token count from 1 to 4294967296"},
        [OPT_LAYER_OVERHEAD - OPT_PROMPT] = {GPUPROBE_SPEED_LAYER_OVERHEAD_NS, 0, 1000000, 1000,
                                             "--layer-overhead wants microseconds from 0 to "
                                             "1000000"},
        [OPT_SPEED_BUDGET - OPT_PROMPT] = {GPUPROBE_SPEED_BUDGET_MS, 1, 60000, 1,
                                           "--speed-budget wants milliseconds from 1 to 60000"},
        [OPT_SPEED_BYTES - OPT_PROMPT] = {GPUPROBE_SPEED_BUFFER_BYTES, 4096, INT64_MAX, 1,
                                          "--speed-bytes wants a size of at least 4096 bytes "
                                          "(4KiB)"},
        [OPT_THREADS - OPT_PROMPT] = {GPUPROBE_SPEED_CPU_THREADS, 1, 1024, 1,
                                      "--threads wants a thread count from 1 to 1024"},
    };
    size_t i = (size_t)(opt - OPT_PROMPT);
    uint64_t n = 0;
    int bad = opt == OPT_SPEED_BYTES ? cli_parse_size(v, k[i].hi, &n) : cli_parse_count(v, k[i].hi, &n);
    if (bad != 0 || n < k[i].lo)
        return cli_bad_value(v, "%s", k[i].want);
    if (!fq.sopts && gpuprobe_speed_options_create(&fq.sopts) != GPUPROBE_OK)
        return cli_fail(NULL, GPUPROBE_ERR_OUT_OF_MEMORY, "the speed options");
    fq.speed |= opt == OPT_PROMPT || opt == OPT_GENERATE;
    gpuprobe_speed_options_set(fq.sopts, k[i].param, (int64_t)(n * k[i].scale));
    return CLI_EXIT_OK;
}

static int option(int opt, const char *v)
{
    if (opt != OPT_WORKLOAD) { /* --workload also serves the lesson's rules */
        int rc = cli_workload_option(&args.w, options[opt].name, v);
        args.model_only |= rc != 1 ? 1u << opt : 0;
        fq.context_given |= opt == OPT_CONTEXT;
        if (rc != 1)
            return rc;
    }
    uint64_t n = 0;
    switch (opt) {
    case OPT_MODEL:
        fq.name = v;
        break;
    case OPT_GPUS:
        args.model_only |= 1u << opt;
        if (strcmp(v, "all") == 0)
            fq.gpus_all = 1;
        else if (cli_parse_count(v, 65536, &n) != 0 || n == 0)
            return cli_bad_value(v, "--gpus wants a count from 1 to 65536, or all");
        fq.gpus = (int64_t)n;
        break;
    case OPT_DEVICE:
        args.device = v;
        break;
    case OPT_MAX_CONTEXT:
    case OPT_MAX_BATCH:
        args.model_only |= 1u << opt;
        fq.solve = opt == OPT_MAX_CONTEXT ? FIT_SOLVE_CONTEXT : FIT_SOLVE_BATCH;
        break;
    case OPT_LIST_MODELS:
        args.list = 1;
        break;
    case OPT_ROOFLINE:
        args.model_only |= 1u << opt;
        fq.roofline = v;
        break;
    case OPT_PROMPT:
    case OPT_GENERATE:
    case OPT_LAYER_OVERHEAD:
    case OPT_SPEED_BUDGET:
    case OPT_SPEED_BYTES:
    case OPT_THREADS:
        args.model_only |= 1u << opt;
        return speed_option(opt, v);
    case OPT_PARAMS:
        if (cli_parse_count(v, GPUPROBE_MAX_PARAMS, &q.params) != 0 || q.params == 0)
            return cli_bad_value(v, "--params wants a parameter count from 1 to 1e15 (7e9)");
        q.have_params = 1;
        break;
    case OPT_DTYPE:
        if (gpuprobe_dtype_parse(v, &args.dtype) != GPUPROBE_OK)
            return cli_bad_dtype(v, "dtype", GP_DTYPES_ALL, "");
        args.dtype_given = 1;
        break;
    case OPT_WORKLOAD:
        if (cli_parse_workload(v, &args.workload) != 0)
            return cli_bad_value(v, "--workload wants weights, inference or training");
        args.workload_given = 1;
        args.w.workload = args.workload;
        break;
    }
    return CLI_EXIT_OK;
}

/* --model: the options that go with it, the config found and read, the
 * workload. */
static int check_model(void)
{
    if (args.model_only & (1u << OPT_MAX_CONTEXT) && args.model_only & (1u << OPT_MAX_BATCH))
        return cli_usage_error("--max-context and --max-batch solve for one thing at a time");
    if (fq.solve == FIT_SOLVE_CONTEXT && fq.context_given)
        return cli_usage_error("--max-context finds the context: it does not go with --context");
    if (fq.solve == FIT_SOLVE_BATCH && args.model_only & (1u << OPT_BATCH))
        return cli_usage_error("--max-batch finds the batch: it does not go with --batch");
    if (args.dtype_given && args.w.weights_dtype >= 0)
        return cli_usage_error("--dtype and --weights-dtype say the same thing: give one");
    if (args.dtype_given)
        args.w.weights_dtype = args.dtype;
    if (fq.sopts && !fq.speed)
        return cli_usage_error("--layer-overhead, --speed-budget, --speed-bytes and --threads go "
                               "with --prompt or --generate");
    if (fq.roofline && !fq.speed)
        return cli_usage_error("--roofline draws the speed estimate: add --prompt or --generate");
    if (fq.roofline && cli_plot_refuse("--roofline", fq.roofline) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (fq.roofline && cli_plot_format_of(fq.roofline) < 0)
        return cli_bad_value(fq.roofline, "--roofline wants a file name ending in .png, .svg or "
                                          ".pdf");
    int rc = cli_model_open(fq.name, &fq.found, &fq.cfg);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!fq.gpus)
        fq.gpus = 1;
    rc = cli_workload_options(&args.w, &fq.cfg, &fq.opts);
    if (rc != CLI_EXIT_OK) {
        cli_model_config_free(&fq.cfg); /* the program ends here */
        return rc;
    }
    if (fq.speed && !fq.context_given && fq.solve != FIT_SOLVE_CONTEXT) {
        /* the plan holds the prompt and what is generated */
        int64_t p = 0, g = 0;
        gpuprobe_speed_options_get(fq.sopts, GPUPROBE_SPEED_PROMPT, &p);
        gpuprobe_speed_options_get(fq.sopts, GPUPROBE_SPEED_GENERATE, &g);
        if (gpuprobe_plan_options_set(fq.opts, GPUPROBE_PLAN_CONTEXT, p + g) != GPUPROBE_OK)
            return cli_usage_error("--prompt and --generate add up to %lld tokens, more than a "
                                   "plan takes", (long long)(p + g));
    }
    return CLI_EXIT_OK;
}

static int check(void)
{
    if (args.list && (fq.name || q.have_params || args.model_only || args.dtype_given ||
                      args.workload_given || args.device))
        return cli_usage_error("--list-models takes no other option but --json");
    if (fq.name && q.have_params)
        return cli_usage_error("--model and --params ask two questions: give one");
    if (!fq.name && args.model_only)
        return cli_usage_error("--context, --batch, --weights-dtype, --kv-dtype, --gpus, --margin, "
                               "--max-context, --max-batch, --prompt, --generate, "
                               "--layer-overhead, --speed-budget, --speed-bytes, --threads and "
                               "--roofline go with --model");
    if (fq.name)
        return check_model();
    if (args.dtype_given) {
        q.dtypes[0] = args.dtype;
        q.n_dtypes = 1;
    } else {
        memcpy(q.dtypes, all_dtypes, sizeof all_dtypes);
        q.n_dtypes = sizeof all_dtypes / sizeof all_dtypes[0];
    }
    int any_rule = 0;
    for (size_t w = 0; w < N_WORKLOADS; w++) {
        q.workload_on[w] = !args.workload_given || workloads[w] == args.workload;
        for (size_t k = 0; q.workload_on[w] && k < q.n_dtypes; k++)
            any_rule |= cli_have_rule(q.dtypes[k], workloads[w]);
    }
    if (!any_rule)
        return cli_usage_error("there is no %s rule for %s (training: %s)",
                               args.workload_given ? gpuprobe_workload_name(args.workload) : "capacity",
                               gpuprobe_dtype_name(args.dtype), cli_training_dtypes());
    return CLI_EXIT_OK;
}

/* The devices --device names (library indices), into list: auto (or
 * none), every device; cuda, every CUDA device; cpu and cuda:N, that one,
 * as gpuprobe_select() resolves it. Returns CLI_EXIT_OK, or the status
 * after reporting (a malformed spec: 2). */
static int pick_devices(gpuprobe_context *ctx, size_t *list, size_t *count, size_t *ncuda)
{
    size_t n = 0, dev = 0;
    gpuprobe_status st = gpuprobe_device_count(ctx, &n);
    if (st != GPUPROBE_OK)
        return cli_fail(ctx, st, "counting devices");
    const char *spec = args.device && args.device[0] ? args.device : "auto";
    int every = strcmp(spec, "auto") == 0, cuda = strcmp(spec, "cuda") == 0;
    *count = *ncuda = 0;
    for (size_t i = 0; i < n && *count < FIT_MAX_DEVICES; i++) {
        int64_t kind = 0;
        gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_KIND, &kind);
        *ncuda += kind == GPUPROBE_DEVICE_CUDA;
        if (every || (cuda && kind == GPUPROBE_DEVICE_CUDA))
            list[(*count)++] = i;
    }
    if (every || (cuda && *count))
        return CLI_EXIT_OK;
    st = gpuprobe_select(ctx, spec, NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL);
    if (st != GPUPROBE_OK) {
        int rc = cli_fail(ctx, st, "--device %s", spec);
        return st == GPUPROBE_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : rc;
    }
    list[0] = dev;
    *count = 1;
    return CLI_EXIT_OK;
}

/* --model: --gpus all becomes the count of CUDA devices, then the plan. */
static int run_model(gpuprobe_context *ctx, const size_t *list, size_t n, size_t ncuda)
{
    if (fq.gpus_all) {
        size_t dev = 0;
        gpuprobe_status st = gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL);
        if (st != GPUPROBE_OK)
            return cli_fail(ctx, st, "--gpus all");
        fq.gpus = (int64_t)ncuda;
    }
    const char *spec = args.device && args.device[0] ? args.device : "auto";
    fq.fewest = strcmp(spec, "auto") == 0 || strcmp(spec, "cuda") == 0;
    return fit_plan_run(ctx, &fq, list, n);
}

static int run(gpuprobe_context *ctx)
{
    if (args.list)
        return list_models();
    size_t list[FIT_MAX_DEVICES], n = 0, ncuda = 0;
    int rc = pick_devices(ctx, list, &n, &ncuda);
    if (fq.name) {
        if (rc == CLI_EXIT_OK)
            rc = run_model(ctx, list, n, ncuda);
        gpuprobe_plan_options_destroy(fq.opts);
        gpuprobe_speed_options_destroy(fq.sopts);
        cli_model_config_free(&fq.cfg);
        return rc;
    }
    if (rc != CLI_EXIT_OK)
        return rc;
    devinfo *di = calloc(n ? n : 1, sizeof *di);
    if (!di)
        return cli_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "counting devices");
    int failed = 0;
    for (size_t i = 0; i < n; i++)
        failed |= query(ctx, &di[i], list[i]);
    int fits_anywhere = 0;
    if (cli_json())
        rc = print_json(&q, di, n, &fits_anywhere);
    else
        print_text(&q, di, n, &fits_anywhere);
    free(di);
    if (rc == CLI_EXIT_OK && (failed || (q.have_params && !fits_anywhere)))
        rc = CLI_EXIT_FAIL;
    return rc;
}

static const cli_command command = {
    "gpuprobe-fit",
    "Will this model fit? With --model, a model's config planned against every\n"
    "device (weights, KV cache, activations, overhead, margin), with the largest\n"
    "context and batch that fit and the fewest GPUs; with --prompt or --generate,\n"
    "how fast it runs there too (time to the first token, decode tokens/s, from\n"
    "bandwidth and matmuls measured on each device). Without it, how large a model\n"
    "fits per dtype and workload; with --params, whether a model of that size fits.",
    options,
    "with --model or --params, the model fits nowhere; or a device query failed",
    "See gpuprobe-fit(1).",
    option,
    check,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
