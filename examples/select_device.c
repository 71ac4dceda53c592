/*
 * select_device.c - the lesson's "No GPU? No problem":
 *
 *     device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
 *     print(f"Using: {device}")
 *
 * with a reason when CUDA is not used, and optional requirements.
 *
 * Usage: select_device [--device SPEC] [--min-free BYTES] [--min-cc X.Y]
 *                      [--fit PARAMS [--dtype D] [--workload W]] [--json]
 *
 *   --device SPEC     the program's default spec: auto (default), cpu, cuda
 *                     or cuda:N. The GPUPROBE_DEVICE environment variable,
 *                     when set, overrides it (empty means auto).
 *   --min-free BYTES  the device must have this much free memory (7e9 ok).
 *   --min-cc X.Y      minimum CUDA compute capability (excludes the CPU).
 *   --fit PARAMS      the device must hold this many parameters of --dtype
 *                     (default fp16) for --workload (weights, inference,
 *                     training; default weights).
 *   --json            one JSON object instead of text:
 *                     {"using": "cpu", "device_index": 0, "name": "...",
 *                      "reason": "...", "cuda_cause": "no_driver"}
 *                     or, on failure, {"error": {"status": "...",
 *                      "message": "..."}} (the message also goes to stderr).
 *
 * Output (text): "Using: <spec>", "Device: <name>", "Reason: <why>".
 * Exit status: 0 chosen; 1 no usable device (CUDA asked for but unusable,
 * cuda:N not found, nothing meets the requirements); 2 malformed input
 * (bad option, malformed spec in --device or GPUPROBE_DEVICE).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "example_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "select_device";

static int usage(const char *msg, const char *arg)
{
    if (msg)
        fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "",
                arg ? arg : "");
    fprintf(stderr,
            "usage: %s [--device SPEC] [--min-free BYTES] [--min-cc X.Y]\n"
            "       [--fit PARAMS [--dtype fp16] [--workload weights]] "
            "[--json]\n",
            prog);
    return EX_USAGE;
}

/* "--name VALUE" or "--name=VALUE": the value, advancing *i; NULL if absent. */
static const char *opt_value(int argc, char **argv, int *i, const char *name,
                             int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int parse_cc(const char *s, int *major, int *minor)
{
    char *end = NULL;
    if (!s || *s < '0' || *s > '9')
        return -1;
    long a = strtol(s, &end, 10);
    long b = 0;
    if (*end == '.') {
        const char *m = end + 1;
        if (*m < '0' || *m > '9')
            return -1;
        b = strtol(m, &end, 10);
    }
    if (*end != '\0' || a > 1000 || b > 1000)
        return -1;
    *major = (int)a;
    *minor = (int)b;
    return 0;
}

static int parse_workload(const char *s, int *w)
{
    for (int i = 0; i <= GPUPROBE_WORKLOAD_TRAINING; i++) {
        if (strcmp(s, gpuprobe_workload_name((gpuprobe_workload)i)) == 0) {
            *w = i;
            return 0;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *spec = "auto";
    int json = 0;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    int have_req = 0;

    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(NULL, NULL);
            return EX_OK;
        } else if ((v = opt_value(argc, argv, &i, "--device", &missing))) {
            spec = v;
        } else if ((v = opt_value(argc, argv, &i, "--min-free", &missing))) {
            if (ex_parse_count(v, UINT64_C(1) << 62, &req.min_free_bytes) != 0)
                return usage("--min-free wants a byte count (e.g. 20e9)", v);
            have_req = 1;
        } else if ((v = opt_value(argc, argv, &i, "--min-cc", &missing))) {
            int major = 0, minor = 0;
            if (parse_cc(v, &major, &minor) != 0)
                return usage("--min-cc wants a compute capability X.Y", v);
            req.min_cc_major = major;
            req.min_cc_minor = minor;
            have_req = 1;
        } else if ((v = opt_value(argc, argv, &i, "--fit", &missing))) {
            if (ex_parse_count(v, GPUPROBE_MAX_PARAMS, &req.fit_params) != 0)
                return usage("--fit wants a parameter count up to 1e15 (e.g. 7e9)",
                             v);
            have_req = 1;
        } else if ((v = opt_value(argc, argv, &i, "--dtype", &missing))) {
            gpuprobe_dtype d;
            if (gpuprobe_dtype_parse(v, &d) != GPUPROBE_OK)
                return usage("unknown --dtype (fp32, fp64, tf32, fp16, bf16, "
                             "fp8, int8, int4)",
                             v);
            req.fit_dtype = (int32_t)d;
        } else if ((v = opt_value(argc, argv, &i, "--workload", &missing))) {
            int w = 0;
            if (parse_workload(v, &w) != 0)
                return usage("unknown --workload (weights, inference, training)",
                             v);
            req.fit_workload = w;
        } else if (missing) {
            return usage("option needs a value", argv[i]);
        } else {
            return usage("unknown argument", argv[i]);
        }
    }

    gpuprobe_context *ctx = NULL;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK) {
        fprintf(stderr, "%s: cannot create a context: %s\n", prog,
                gpuprobe_status_string(st));
        return EX_FAIL;
    }

    size_t dev = 0;
    const char *reason = NULL;
    st = gpuprobe_select(ctx, spec, have_req ? &req : NULL, 0, &dev, &reason);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "cannot select a device", ctx, st);
        if (json) {
            printf("{\"error\": {\"status\": ");
            ex_json_string(stdout, gpuprobe_status_name(st));
            printf(", \"message\": ");
            ex_json_string(stdout, gpuprobe_last_error(ctx));
            printf("}}\n");
        }
        gpuprobe_context_destroy(ctx);
        return st == GPUPROBE_ERR_INVALID_ARGUMENT ? EX_USAGE : EX_FAIL;
    }

    const char *dspec = "?", *name = "?";
    if (gpuprobe_device_get_string(ctx, dev, GPUPROBE_ATTR_SPEC, &dspec) !=
            GPUPROBE_OK ||
        gpuprobe_device_get_string(ctx, dev, GPUPROBE_ATTR_NAME, &name) !=
            GPUPROBE_OK) {
        ex_report(prog, "cannot describe the device", ctx, GPUPROBE_ERR_INTERNAL);
        gpuprobe_context_destroy(ctx);
        return EX_FAIL;
    }
    /* The reason lasts until the next call on the context: copy it. */
    char why[1024];
    snprintf(why, sizeof why, "%s", reason ? reason : "");
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    gpuprobe_cuda_status(ctx, &cause, NULL);

    if (json) {
        printf("{\"using\": ");
        ex_json_string(stdout, dspec);
        printf(", \"device_index\": %zu, \"name\": ", dev);
        ex_json_string(stdout, name);
        printf(", \"reason\": ");
        ex_json_string(stdout, why);
        printf(", \"cuda_cause\": ");
        ex_json_string(stdout, gpuprobe_cuda_cause_name(cause));
        printf("}\n");
    } else {
        printf("Using: %s\n", dspec);
        printf("Device: %s\n", name);
        printf("Reason: %s\n", why);
    }
    gpuprobe_context_destroy(ctx);
    return EX_OK;
}
