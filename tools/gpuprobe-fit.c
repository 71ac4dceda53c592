/*
 * gpuprobe-fit - the lesson's exercise 3, "estimate the largest model you
 * can fit (rule of thumb: 2 bytes per parameter for fp16)", for every
 * device, dtype and workload, against the memory that is really usable; or,
 * with --params, whether a given model fits and where. See gpuprobe-fit(1)
 * and docs/json.md.
 *
 * Rules (gpuprobe.h): weights = dtype size per parameter (the lesson's
 * rule); inference = weights x 1.2 (EleutherAI, "Transformer Math 101");
 * training = AdamW mixed precision, 16 bytes per parameter before
 * activations. A GPU's usable memory is its free memory minus the CUDA
 * context's cost (measured when possible, else a 512 MiB default); the
 * CPU's is the available RAM (cgroup-aware).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PARAMS, OPT_DTYPE, OPT_WORKLOAD, OPT_JSON };

static const cli_option options[] = {
    [OPT_PARAMS] = {"params", "N", "does an N-parameter model fit, and where (7e9 ok)"},
    [OPT_DTYPE] = {"dtype", "D", "only this dtype (fp32, fp64, tf32, fp16, bf16, fp8, int8, int4)"},
    [OPT_WORKLOAD] = {"workload", "W", "only this workload (weights, inference, training)"},
    [OPT_JSON] = {"json", NULL, "print one JSON object instead of text"},
    {NULL, NULL, NULL},
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

/* The question: which dtypes and workloads, and the model (when given).
 * The model is a bare parameter count today; a model description (its
 * config, context length, batch, KV-cache dtype) would fill it in. */
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

static const char *reserve_name(uint32_t source)
{
    switch (source) {
    case GPUPROBE_RESERVE_MEASURED: return "measured";
    case GPUPROBE_RESERVE_DEFAULT: return "default";
    case GPUPROBE_RESERVE_CONTEXT_HELD: return "context_held";
    default: return "none";
    }
}

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
    cli_bytes(a, sizeof a, cap->total_bytes);
    cli_bytes(b, sizeof b, cap->free_bytes);
    cli_line("  memory: %s total, %s %s", a, b, d->kind == GPUPROBE_DEVICE_CPU ? "available" : "free");
    cli_bytes(a, sizeof a, cap->usable_bytes);
    cli_bytes(c, sizeof c, cap->reserve_bytes);
    if (cap->reserve_source == GPUPROBE_RESERVE_NONE)
        cli_line("  usable: %s (available RAM, cgroup-aware; nothing reserved)", a);
    else if (cap->reserve_source == GPUPROBE_RESERVE_CONTEXT_HELD)
        cli_line("  usable: %s = %s free (read inside this process's CUDA context, "
                 "which is already counted; nothing more reserved)", a, b);
    else
        cli_line("  usable: %s = %s free - %s for the CUDA context (%s)", a, b, c,
                 cap->reserve_source == GPUPROBE_RESERVE_MEASURED ? "measured on this device"
                                                                  : "default reserve: nothing measured");
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
                cli_bytes(a, sizeof a, need);
                cli_put("    %-4s %-9s needs %9s: ", gpuprobe_dtype_name(dt),
                        gpuprobe_workload_name(workloads[w]), a);
                if (need <= cap->usable_bytes) {
                    *fits_anywhere = 1;
                    cli_line("fits");
                } else {
                    cli_bytes(b, sizeof b, cap->usable_bytes);
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
                cli_count(a, sizeof a, p);
                cli_line("    %s: %s parameters", gpuprobe_dtype_name(dt), a);
            }
        }
    }
    /* What the lesson's rule on total memory would have said. */
    uint64_t naive = 0;
    if (!q->have_params && d->kind != GPUPROBE_DEVICE_CPU &&
        max_params(cap->total_bytes, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, &naive) == 0) {
        cli_count(a, sizeof a, naive);
        cli_line("  (total / 2 bytes would say %s fp16 parameters; not all of the total is usable)", a);
    }
    cli_endl();
}

static void print_text(const question *q, const devinfo *di, size_t n, int *fits_anywhere)
{
    if (q->have_params) {
        char a[32];
        cli_count(a, sizeof a, q->params);
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
    cli_set_str(o, "reserve_source", reserve_name(cap->reserve_source));
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

/* ---- main ---- */

static question q;
static struct {
    int dtype_given, workload_given;
    gpuprobe_dtype dtype;
    gpuprobe_workload workload;
} args = {0, 0, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS};

static int option(int opt, const char *v)
{
    if (opt == OPT_PARAMS) {
        if (cli_parse_count(v, GPUPROBE_MAX_PARAMS, &q.params) != 0 || q.params == 0)
            return cli_bad_value(v, "--params wants a parameter count from 1 to 1e15 (7e9)");
        q.have_params = 1;
    } else if (opt == OPT_DTYPE) {
        if (gpuprobe_dtype_parse(v, &args.dtype) != GPUPROBE_OK)
            return cli_bad_value(v, "--dtype wants fp32, fp64, tf32, fp16, bf16, fp8, int8 or int4");
        args.dtype_given = 1;
    } else if (opt == OPT_WORKLOAD) {
        if (cli_parse_workload(v, &args.workload) != 0)
            return cli_bad_value(v, "--workload wants weights, inference or training");
        args.workload_given = 1;
    }
    return CLI_EXIT_OK;
}

static int check(void)
{
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
        return cli_usage_error("there is no %s rule for %s (training: fp32, fp64, fp16, bf16)",
                               args.workload_given ? gpuprobe_workload_name(args.workload) : "capacity",
                               gpuprobe_dtype_name(args.dtype));
    return CLI_EXIT_OK;
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

static int run(gpuprobe_context *ctx)
{
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(ctx, &n);
    devinfo *di = st == GPUPROBE_OK ? calloc(n, sizeof *di) : NULL;
    if (!di)
        return cli_fail(ctx, st == GPUPROBE_OK ? GPUPROBE_ERR_OUT_OF_MEMORY : st, "counting devices");
    int failed = 0;
    for (size_t i = 0; i < n; i++)
        failed |= query(ctx, &di[i], i);
    int fits_anywhere = 0, rc = CLI_EXIT_OK;
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
    "How large a model fits in each device's usable memory, per dtype and\n"
    "workload; with --params, whether a given model fits and where.",
    options,
    "with --params, the model fits nowhere; or a device query failed",
    "See gpuprobe-fit(1).",
    option,
    check,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
