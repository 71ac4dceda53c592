/*
 * vram_capacity.c - the lesson's exercise 3: "Check how much GPU memory you
 * have and estimate the largest model you can fit (rule of thumb: 2 bytes
 * per parameter for fp16)", for every device, every common dtype, and three
 * workloads, against the memory that is really usable.
 *
 * Usage: vram_capacity [--params N] [--json]
 *
 *   --params N  answer "does an N-parameter model fit, and where" (7e9 ok).
 *   --json      print one JSON object instead of text.
 *
 * Rules (see gpuprobe.h): weights = dtype size per parameter (the lesson's
 * rule); inference = weights x 1.2 (EleutherAI, "Transformer Math 101");
 * training = AdamW mixed precision, 16 bytes per parameter before
 * activations (fp32, fp16, bf16; no rule for fp8, int8, int4). A GPU's
 * usable memory is its free memory minus the CUDA context's cost (measured
 * when possible, else a 512 MiB default); the CPU's is the available RAM
 * (cgroup-aware).
 *
 * JSON keys:
 *   devices[]               one object per device:
 *     device                "cpu" or "cuda:N"
 *     name                  product or CPU model name
 *     total_bytes           total memory (CPU: RAM, cgroup-aware)
 *     free_bytes            free memory now (CPU: available RAM)
 *     reserve_bytes         subtracted for a CUDA context (0 on the CPU)
 *     reserve_source        "none" (CPU), "measured" or "default"
 *     usable_bytes          free_bytes - reserve_bytes, at least 0
 *     max_params            {dtype: largest parameter count, weights only}
 *     max_params_inference  {dtype: same, for inference}
 *     max_params_training   {dtype: same, for training; only dtypes with a rule}
 *     error                 instead of the memory keys when the device
 *                           could not be queried (the message)
 *   Parameter counts above 10^15 are written as null.
 *   params                  the --params value (only with --params)
 *   fits[]                  only with --params; one object per device,
 *                           dtype and workload with a rule:
 *     device, dtype, workload, bytes_needed, usable_bytes, fits (boolean)
 *
 * Exit status: 0; 1 when a device could not be queried; 2 for bad options.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "example_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "vram_capacity";

static const gpuprobe_dtype dtypes[] = {
    GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16,
    GPUPROBE_DTYPE_FP8,  GPUPROBE_DTYPE_INT8, GPUPROBE_DTYPE_INT4,
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

static const gpuprobe_workload workloads[] = {
    GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_WORKLOAD_INFERENCE,
    GPUPROBE_WORKLOAD_TRAINING,
};
#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])

static const char *const workload_title[] = {
    "weights only (the lesson's rule: dtype size per parameter)",
    "inference (weights x 1.2, EleutherAI \"Transformer Math 101\")",
    "training (AdamW mixed precision, 16 bytes/param before activations)",
};

static const char *const json_key[] = {"max_params", "max_params_inference",
                                       "max_params_training"};

static const char *reserve_name(uint32_t source)
{
    switch (source) {
    case GPUPROBE_RESERVE_MEASURED: return "measured";
    case GPUPROBE_RESERVE_DEFAULT: return "default";
    default: return "none";
    }
}

typedef struct devinfo {
    const char *spec;
    const char *name;
    int kind;
    gpuprobe_status st;    /* of the capacity query */
    char error[512];
    gpuprobe_capacity cap; /* memory figures (fp16 weights) */
} devinfo;

static int usage(const char *msg, const char *arg)
{
    if (msg)
        fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "",
                arg ? arg : "");
    fprintf(stderr, "usage: %s [--params N] [--json]\n", prog);
    return EX_USAGE;
}

/* Largest count for usable bytes; -1 no rule, 1 above 10^15, 0 ok. */
static int max_params(uint64_t usable, gpuprobe_dtype d, gpuprobe_workload w,
                      uint64_t *out)
{
    gpuprobe_status st = gpuprobe_capacity_params(usable, d, w, out);
    if (st == GPUPROBE_ERR_UNSUPPORTED)
        return -1;
    if (st == GPUPROBE_ERR_OVERFLOW)
        return 1;
    return st == GPUPROBE_OK ? 0 : -1;
}

static void print_text(const devinfo *di, size_t n, int have_params,
                       uint64_t params)
{
    char a[32], b[32], c[32];
    if (have_params) {
        ex_human_count(a, sizeof a, params);
        printf("Does a %s-parameter model fit? (%llu parameters)\n\n", a,
               (unsigned long long)params);
    }
    for (size_t i = 0; i < n; i++) {
        const devinfo *d = &di[i];
        printf("%s (%s)\n", d->spec, d->name);
        if (d->st != GPUPROBE_OK) {
            printf("  error: %s: %s\n\n", gpuprobe_status_string(d->st),
                   d->error);
            continue;
        }
        const gpuprobe_capacity *cap = &d->cap;
        ex_human_bytes(a, sizeof a, cap->total_bytes);
        ex_human_bytes(b, sizeof b, cap->free_bytes);
        printf("  memory: %s total, %s %s\n", a,
               b, d->kind == GPUPROBE_DEVICE_CPU ? "available" : "free");
        ex_human_bytes(a, sizeof a, cap->usable_bytes);
        ex_human_bytes(c, sizeof c, cap->reserve_bytes);
        if (cap->reserve_source == GPUPROBE_RESERVE_NONE)
            printf("  usable: %s (available RAM, cgroup-aware; nothing "
                   "reserved)\n",
                   a);
        else
            printf("  usable: %s = %s free - %s for the CUDA context (%s)\n",
                   a, b, c,
                   cap->reserve_source == GPUPROBE_RESERVE_MEASURED
                       ? "measured on this device"
                       : "default reserve: nothing measured");

        if (!have_params) {
            for (size_t w = 0; w < N_WORKLOADS; w++) {
                printf("  %s:\n", workload_title[w]);
                for (size_t k = 0; k < N_DTYPES; k++) {
                    uint64_t p = 0;
                    int r = max_params(cap->usable_bytes, dtypes[k],
                                       workloads[w], &p);
                    printf("    %s: ", gpuprobe_dtype_name(dtypes[k]));
                    if (r < 0) {
                        printf("no rule\n");
                    } else if (r > 0) {
                        printf("more than 10^15 parameters\n");
                    } else {
                        ex_human_count(a, sizeof a, p);
                        printf("%s parameters\n", a);
                    }
                }
            }
            /* What the lesson's rule on total memory would have said. */
            uint64_t naive = 0;
            if (d->kind != GPUPROBE_DEVICE_CPU &&
                max_params(cap->total_bytes, GPUPROBE_DTYPE_FP16,
                           GPUPROBE_WORKLOAD_WEIGHTS, &naive) == 0) {
                ex_human_count(a, sizeof a, naive);
                printf("  (total / 2 bytes would say %s fp16 parameters; not "
                       "all of the total is usable)\n",
                       a);
            }
        } else {
            for (size_t w = 0; w < N_WORKLOADS; w++) {
                for (size_t k = 0; k < N_DTYPES; k++) {
                    uint64_t need = 0;
                    if (gpuprobe_capacity_bytes(params, dtypes[k], workloads[w],
                                                &need) != GPUPROBE_OK)
                        continue;
                    ex_human_bytes(a, sizeof a, need);
                    printf("    %-4s %-9s needs %9s: ",
                           gpuprobe_dtype_name(dtypes[k]),
                           gpuprobe_workload_name(workloads[w]), a);
                    if (need <= cap->usable_bytes) {
                        printf("fits\n");
                    } else {
                        ex_human_bytes(b, sizeof b, cap->usable_bytes);
                        printf("does not fit (%s usable)\n", b);
                    }
                }
            }
        }
        printf("\n");
    }
}

static void print_json(const devinfo *di, size_t n, int have_params,
                       uint64_t params)
{
    printf("{\"devices\": [");
    for (size_t i = 0; i < n; i++) {
        const devinfo *d = &di[i];
        printf("%s\n  {\"device\": ", i ? "," : "");
        ex_json_string(stdout, d->spec);
        printf(", \"name\": ");
        ex_json_string(stdout, d->name);
        if (d->st != GPUPROBE_OK) {
            printf(", \"error\": ");
            ex_json_string(stdout, d->error);
            printf("}");
            continue;
        }
        const gpuprobe_capacity *cap = &d->cap;
        printf(", \"total_bytes\": %llu, \"free_bytes\": %llu, "
               "\"reserve_bytes\": %llu, \"reserve_source\": \"%s\", "
               "\"usable_bytes\": %llu",
               (unsigned long long)cap->total_bytes,
               (unsigned long long)cap->free_bytes,
               (unsigned long long)cap->reserve_bytes,
               reserve_name(cap->reserve_source),
               (unsigned long long)cap->usable_bytes);
        for (size_t w = 0; w < N_WORKLOADS; w++) {
            printf(",\n   \"%s\": {", json_key[w]);
            int first = 1;
            for (size_t k = 0; k < N_DTYPES; k++) {
                uint64_t p = 0;
                int r = max_params(cap->usable_bytes, dtypes[k], workloads[w], &p);
                if (r < 0)
                    continue;
                printf("%s\"%s\": ", first ? "" : ", ",
                       gpuprobe_dtype_name(dtypes[k]));
                if (r > 0)
                    printf("null");
                else
                    printf("%llu", (unsigned long long)p);
                first = 0;
            }
            printf("}");
        }
        printf("}");
    }
    printf("\n ]");
    if (have_params) {
        printf(",\n \"params\": %llu,\n \"fits\": [", (unsigned long long)params);
        int first = 1;
        for (size_t i = 0; i < n; i++) {
            const devinfo *d = &di[i];
            if (d->st != GPUPROBE_OK)
                continue;
            for (size_t w = 0; w < N_WORKLOADS; w++) {
                for (size_t k = 0; k < N_DTYPES; k++) {
                    uint64_t need = 0;
                    if (gpuprobe_capacity_bytes(params, dtypes[k], workloads[w],
                                                &need) != GPUPROBE_OK)
                        continue;
                    printf("%s\n  {\"device\": ", first ? "" : ",");
                    ex_json_string(stdout, d->spec);
                    printf(", \"dtype\": \"%s\", \"workload\": \"%s\", "
                           "\"bytes_needed\": %llu, \"usable_bytes\": %llu, "
                           "\"fits\": %s}",
                           gpuprobe_dtype_name(dtypes[k]),
                           gpuprobe_workload_name(workloads[w]),
                           (unsigned long long)need,
                           (unsigned long long)d->cap.usable_bytes,
                           need <= d->cap.usable_bytes ? "true" : "false");
                    first = 0;
                }
            }
        }
        printf("\n ]");
    }
    printf("}\n");
}

int main(int argc, char **argv)
{
    int json = 0, have_params = 0;
    uint64_t params = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(NULL, NULL);
            return EX_OK;
        } else if (strcmp(a, "--params") == 0 || strncmp(a, "--params=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                return usage("--params needs a value", NULL);
            if (ex_parse_count(v, GPUPROBE_MAX_PARAMS, &params) != 0)
                return usage("--params wants a parameter count up to 1e15 "
                             "(e.g. 7e9)",
                             v);
            have_params = 1;
        } else {
            return usage("unknown argument", a);
        }
    }

    gpuprobe_context *ctx = NULL;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK) {
        fprintf(stderr, "%s: cannot create a context: %s\n", prog,
                gpuprobe_status_string(st));
        return EX_FAIL;
    }
    size_t n = 0;
    st = gpuprobe_device_count(ctx, &n);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "cannot enumerate devices", ctx, st);
        gpuprobe_context_destroy(ctx);
        return EX_FAIL;
    }
    devinfo *di = calloc(n, sizeof *di);
    if (!di) {
        fprintf(stderr, "%s: out of memory\n", prog);
        gpuprobe_context_destroy(ctx);
        return EX_FAIL;
    }
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        devinfo *d = &di[i];
        int64_t kind = 0;
        d->spec = "?";
        d->name = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &d->spec);
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &d->name);
        gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_KIND, &kind);
        d->kind = (int)kind;
        d->cap = (gpuprobe_capacity)GPUPROBE_CAPACITY_INIT;
        /* One query per device, so every figure below uses the same
         * snapshot; the per-dtype answers come from capacity_params(). */
        d->st = gpuprobe_device_capacity(ctx, i, GPUPROBE_DTYPE_FP16,
                                         GPUPROBE_WORKLOAD_WEIGHTS, 0, &d->cap);
        if (d->st != GPUPROBE_OK) {
            snprintf(d->error, sizeof d->error, "%s", gpuprobe_last_error(ctx));
            fprintf(stderr, "%s: %s: %s: %s\n", prog, d->spec,
                    gpuprobe_status_string(d->st), d->error);
            failed = 1;
        }
    }
    if (json)
        print_json(di, n, have_params, params);
    else
        print_text(di, n, have_params, params);
    free(di);
    gpuprobe_context_destroy(ctx);
    return failed ? EX_FAIL : EX_OK;
}
