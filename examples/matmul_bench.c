/*
 * matmul_bench.c - the lesson's "GPU vs CPU benchmark", done properly:
 * seeded random inputs, setup and transfers timed apart, warm-up, the
 * median of several timed runs (CUDA events on a GPU), and every result
 * verified. On a GPU it also measures the tensor-core precisions of the
 * lesson's "Key terms" (fp32 vs tf32 vs fp16 vs bf16).
 *
 * Usage: matmul_bench [--size N] [--device SPEC] [--dtype D] [--runs N]
 *                     [--threads N] [--json]
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "gpuprobe.h"

static const char *prog = "matmul_bench";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s [--size N] [--device SPEC] [--dtype D] [--runs N] "
            "[--threads N] [--json]\n"
            "  --size N      multiply N x N matrices (default 5000, the lesson's size)\n"
            "  --device SPEC cpu | cuda | cuda:N | auto: run on that device only\n"
            "                (default: the CPU, then the best CUDA device if usable)\n"
            "  --dtype D     fp32 (default) | fp64 (CPU) | tf32 | fp16 | bf16 (CUDA)\n"
            "  --runs N      timed runs (default 5; the median is reported)\n"
            "  --threads N   OpenBLAS threads for the CPU run (default: as configured)\n"
            "  --json        print one JSON object instead of text\n",
            prog);
}

typedef struct rec {
    size_t device;
    char spec[32];
    gpuprobe_dtype dtype;
    gpuprobe_status st;
    char error[512];
    gpuprobe_matmul_result *r;
} rec;

#define MAX_RECS 8

static struct {
    int64_t size, runs, threads;
    int dtype_given, json;
    gpuprobe_dtype dtype;
    const char *device;
} args = {5000, 0, 0, 0, 0, GPUPROBE_DTYPE_FP32, NULL};

static rec recs[MAX_RECS];
static size_t nrecs;

static double dget(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    double v = 0;
    gpuprobe_matmul_result_get_double(r, m, &v);
    return v;
}

static int64_t iget(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    int64_t v = 0;
    gpuprobe_matmul_result_get_int(r, m, &v);
    return v;
}

static const char *sget(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    const char *v = "";
    gpuprobe_matmul_result_get_string(r, m, &v);
    return v;
}

/* Run one matmul and record it (result or error). Returns the record. */
static rec *run_one(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dt)
{
    rec *x = &recs[nrecs++];
    memset(x, 0, sizeof *x);
    x->device = device;
    x->dtype = dt;
    const char *spec = "?";
    if (gpuprobe_device_get_string(ctx, device, GPUPROBE_ATTR_SPEC, &spec) != GPUPROBE_OK)
        spec = "?";
    snprintf(x->spec, sizeof x->spec, "%s", spec);

    gpuprobe_matmul_options *o = NULL;
    x->st = gpuprobe_matmul_options_create(&o);
    if (x->st == GPUPROBE_OK) {
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, args.size);
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
        if (args.runs > 0) {
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, args.runs);
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, args.runs);
        }
        if (args.threads > 0)
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, args.threads);
        x->st = gpuprobe_matmul_run(ctx, device, o, 0, &x->r);
        gpuprobe_matmul_options_destroy(o);
    }
    if (x->st != GPUPROBE_OK)
        snprintf(x->error, sizeof x->error, "%s", gpuprobe_last_error(ctx));
    return x;
}

static int is_cuda(gpuprobe_context *ctx, size_t device)
{
    int64_t kind = GPUPROBE_DEVICE_CPU;
    gpuprobe_device_get_int(ctx, device, GPUPROBE_ATTR_KIND, &kind);
    return kind == GPUPROBE_DEVICE_CUDA;
}

/* ---- text output ---------------------------------------------------------- */

static void print_speedup(const char *label, double ratio)
{
    /* The lesson prints "{:.0f}x"; keep one decimal below 10x. */
    printf("%s: %.*fx\n", label, ratio >= 10 ? 0 : 1, ratio);
}

static void print_rec(const char *label, const rec *x)
{
    if (!x->r) {
        printf("%s: failed (%s): %s\n", label, gpuprobe_status_string(x->st), x->error);
        return;
    }
    const gpuprobe_matmul_result *r = x->r;
    int64_t verified = iget(r, GPUPROBE_METRIC_VERIFIED);
    printf("%s: %.3fs  (%s, median of %lld runs, %.1f GFLOP/s", label,
           dget(r, GPUPROBE_METRIC_MEDIAN_S), gpuprobe_dtype_name(x->dtype),
           (long long)iget(r, GPUPROBE_METRIC_RUNS), dget(r, GPUPROBE_METRIC_GFLOPS));
    double frac = dget(r, GPUPROBE_METRIC_PEAK_FRACTION);
    if (frac > 0)
        printf(", %.0f%% of %.0f peak", 100 * frac, dget(r, GPUPROBE_METRIC_PEAK_GFLOPS));
    printf(", %s)\n", verified > 0 ? "verified" : verified == 0 ? "VERIFICATION FAILED"
                                                                  : "not verified");
    printf("     %s on %s", sget(r, GPUPROBE_METRIC_BACKEND),
           sget(r, GPUPROBE_METRIC_DEVICE_NAME));
    if (iget(r, GPUPROBE_METRIC_THREADS) > 0)
        printf(", %lld threads", (long long)iget(r, GPUPROBE_METRIC_THREADS));
    else
        printf(", %s, %s", sget(r, GPUPROBE_METRIC_COMPUTE_TYPE),
               sget(r, GPUPROBE_METRIC_MATH_MODE));
    printf("; setup %.3fs", dget(r, GPUPROBE_METRIC_SETUP_S));
    double h2d = dget(r, GPUPROBE_METRIC_H2D_S), d2h = dget(r, GPUPROBE_METRIC_D2H_S);
    if (h2d > 0 || d2h > 0)
        printf(", host->device %.4fs, device->host %.4fs", h2d, d2h);
    printf("; max error %.2g (tolerance %.2g)\n", dget(r, GPUPROBE_METRIC_MAX_ERROR),
           dget(r, GPUPROBE_METRIC_TOLERANCE));
}

static void print_table(const rec *rows, size_t count)
{
    const rec *base = NULL;
    for (size_t i = 0; i < count; i++)
        if (rows[i].dtype == GPUPROBE_DTYPE_FP32 && rows[i].r)
            base = &rows[i];
    printf("\nTensor cores (%s, %lld x %lld x %lld, measured):\n",
           base ? sget(base->r, GPUPROBE_METRIC_DEVICE_NAME) : "GPU",
           (long long)args.size, (long long)args.size, (long long)args.size);
    printf("  %-5s %11s %11s %9s  %s\n", "dtype", "median_s", "GFLOP/s", "vs fp32", "verified");
    for (size_t i = 0; i < count; i++) {
        const rec *x = &rows[i];
        if (!x->r) {
            printf("  %-5s %s: %s\n", gpuprobe_dtype_name(x->dtype),
                   gpuprobe_status_string(x->st), x->error);
            continue;
        }
        double med = dget(x->r, GPUPROBE_METRIC_MEDIAN_S);
        double sp = base ? dget(base->r, GPUPROBE_METRIC_MEDIAN_S) / med : 0;
        int64_t v = iget(x->r, GPUPROBE_METRIC_VERIFIED);
        printf("  %-5s %11.5f %11.1f %8.1fx  %s\n", gpuprobe_dtype_name(x->dtype), med,
               dget(x->r, GPUPROBE_METRIC_GFLOPS), sp,
               v > 0 ? "yes" : v == 0 ? "FAILED" : "-");
    }
}

/* ---- JSON output ---------------------------------------------------------- */

static void json_rec(const rec *x)
{
    printf("{\"device\": ");
    ex_json_string(stdout, x->spec);
    printf(", \"dtype\": \"%s\", \"n\": %lld, \"status\": \"%s\"",
           gpuprobe_dtype_name(x->dtype), (long long)args.size,
           gpuprobe_status_name(x->st));
    if (x->st != GPUPROBE_OK) {
        printf(", \"error\": ");
        ex_json_string(stdout, x->error);
    }
    if (x->r) {
        const gpuprobe_matmul_result *r = x->r;
        static const struct {
            const char *key;
            gpuprobe_matmul_metric m;
        } d[] = {
            {"median_s", GPUPROBE_METRIC_MEDIAN_S}, {"min_s", GPUPROBE_METRIC_MIN_S},
            {"max_s", GPUPROBE_METRIC_MAX_S}, {"mean_s", GPUPROBE_METRIC_MEAN_S},
            {"stddev_s", GPUPROBE_METRIC_STDDEV_S}, {"gflops", GPUPROBE_METRIC_GFLOPS},
            {"peak_gflops", GPUPROBE_METRIC_PEAK_GFLOPS},
            {"peak_fraction", GPUPROBE_METRIC_PEAK_FRACTION},
            {"max_error", GPUPROBE_METRIC_MAX_ERROR}, {"tolerance", GPUPROBE_METRIC_TOLERANCE},
            {"setup_s", GPUPROBE_METRIC_SETUP_S}, {"h2d_s", GPUPROBE_METRIC_H2D_S},
            {"d2h_s", GPUPROBE_METRIC_D2H_S},
        };
        for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
            printf(", \"%s\": ", d[i].key);
            ex_json_double(stdout, dget(r, d[i].m));
        }
        int64_t v = iget(r, GPUPROBE_METRIC_VERIFIED);
        printf(", \"verified\": %s", v > 0 ? "true" : v == 0 ? "false" : "null");
        printf(", \"runs\": %lld, \"threads\": %lld",
               (long long)iget(r, GPUPROBE_METRIC_RUNS),
               (long long)iget(r, GPUPROBE_METRIC_THREADS));
        static const struct {
            const char *key;
            gpuprobe_matmul_metric m;
        } s[] = {
            {"device_name", GPUPROBE_METRIC_DEVICE_NAME}, {"backend", GPUPROBE_METRIC_BACKEND},
            {"math_mode", GPUPROBE_METRIC_MATH_MODE},
            {"compute_type", GPUPROBE_METRIC_COMPUTE_TYPE},
        };
        for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
            printf(", \"%s\": ", s[i].key);
            ex_json_string(stdout, sget(r, s[i].m));
        }
    }
    printf("}");
}

/* ---- main ------------------------------------------------------------------ */

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(EX_OK);
        }
        if (strcmp(a, "--json") == 0) {
            args.json = 1;
            continue;
        }
        int takes = strcmp(a, "--size") == 0 || strcmp(a, "--device") == 0 ||
                    strcmp(a, "--dtype") == 0 || strcmp(a, "--runs") == 0 ||
                    strcmp(a, "--threads") == 0;
        if (!takes) {
            fprintf(stderr, "%s: unknown option '%s'\n", prog, a);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a value\n", prog, a);
            return -1;
        }
        const char *v = argv[++i];
        uint64_t n = 0;
        if (strcmp(a, "--device") == 0) {
            args.device = v;
        } else if (strcmp(a, "--dtype") == 0) {
            if (gpuprobe_dtype_parse(v, &args.dtype) != GPUPROBE_OK ||
                args.dtype > GPUPROBE_DTYPE_BF16) {
                fprintf(stderr, "%s: --dtype must be fp32, fp64, tf32, fp16 or bf16, not '%s'\n",
                        prog, v);
                return -1;
            }
            args.dtype_given = 1;
        } else {
            int64_t lo = 1, hi = INT32_MAX;
            gpuprobe_matmul_param p = strcmp(a, "--size") == 0   ? GPUPROBE_MATMUL_M
                                      : strcmp(a, "--runs") == 0 ? GPUPROBE_MATMUL_MIN_RUNS
                                                                 : GPUPROBE_MATMUL_CPU_THREADS;
            gpuprobe_matmul_param_bounds(p, &lo, &hi);
            if (lo < 1)
                lo = 1;
            if (ex_parse_count(v, (uint64_t)hi, &n) != 0 || n < (uint64_t)lo) {
                fprintf(stderr, "%s: %s must be a whole number in [%lld, %lld], not '%s'\n",
                        prog, a, (long long)lo, (long long)hi, v);
                return -1;
            }
            if (strcmp(a, "--size") == 0)
                args.size = (int64_t)n;
            else if (strcmp(a, "--runs") == 0)
                args.runs = (int64_t)n;
            else
                args.threads = (int64_t)n;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0) {
        usage(stderr);
        return EX_USAGE;
    }
    gpuprobe_context *ctx = NULL;
    gpuprobe_status st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK) {
        fprintf(stderr, "%s: cannot create a context: %s\n", prog, gpuprobe_status_string(st));
        return EX_FAIL;
    }
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_NOT_BUILT;
    const char *detail = "";
    gpuprobe_cuda_status(ctx, &cause, &detail);
    char reason[640];
    snprintf(reason, sizeof reason, "%s%s%s", gpuprobe_cuda_cause_string(cause),
             detail && detail[0] ? ": " : "", detail ? detail : "");

    int failed = 0;
    const rec *cpu = NULL, *gpu = NULL;
    size_t table_from = 0, table_count = 0;
    size_t gpu_dev = 0;
    int have_gpu = 0;

    if (args.device) {
        /* An explicit --device wins over GPUPROBE_DEVICE. */
        const char *why = NULL;
        size_t dev = 0;
        st = gpuprobe_select(ctx, args.device, NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why);
        if (st != GPUPROBE_OK) {
            ex_report(prog, "--device", ctx, st);
            gpuprobe_context_destroy(ctx);
            return st == GPUPROBE_ERR_INVALID_ARGUMENT ? EX_USAGE : EX_FAIL;
        }
        if (is_cuda(ctx, dev)) {
            gpu = run_one(ctx, dev, args.dtype);
            gpu_dev = dev;
            have_gpu = 1;
        } else {
            cpu = run_one(ctx, dev, args.dtype);
        }
    } else {
        gpuprobe_dtype cpu_dt = args.dtype == GPUPROBE_DTYPE_FP64 ? GPUPROBE_DTYPE_FP64
                                                                  : GPUPROBE_DTYPE_FP32;
        cpu = run_one(ctx, 0, cpu_dt);
        if (cause == GPUPROBE_CUDA_AVAILABLE && args.dtype != GPUPROBE_DTYPE_FP64) {
            size_t dev = 0;
            if (gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL) ==
                GPUPROBE_OK) {
                gpu = run_one(ctx, dev, args.dtype);
                gpu_dev = dev;
                have_gpu = 1;
            } else {
                snprintf(reason, sizeof reason, "%s", gpuprobe_last_error(ctx));
            }
        }
    }
    /* The lesson's "Key terms" tensor-core table, measured. */
    if (have_gpu && !args.dtype_given) {
        static const gpuprobe_dtype tc[] = {GPUPROBE_DTYPE_TF32, GPUPROBE_DTYPE_FP16,
                                            GPUPROBE_DTYPE_BF16};
        table_from = (size_t)(gpu - recs);
        for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++)
            run_one(ctx, gpu_dev, tc[i]);
        table_count = nrecs - table_from;
    }

    for (size_t i = 0; i < nrecs; i++) {
        /* A tensor-core precision the GPU lacks is a table entry, not a failure. */
        if (recs[i].st != GPUPROBE_OK &&
            !(i > table_from && table_count && recs[i].st == GPUPROBE_ERR_UNSUPPORTED))
            failed = 1;
    }
    double speedup = 0;
    if (cpu && gpu && cpu->r && gpu->r)
        speedup = dget(cpu->r, GPUPROBE_METRIC_MEDIAN_S) / dget(gpu->r, GPUPROBE_METRIC_MEDIAN_S);

    if (args.json) {
        printf("{\"results\": [");
        for (size_t i = 0; i < nrecs; i++) {
            printf(i ? ", " : "");
            json_rec(&recs[i]);
        }
        printf("], \"cuda_available\": %s, \"reason\": ",
               cause == GPUPROBE_CUDA_AVAILABLE ? "true" : "false");
        ex_json_string(stdout, reason);
        printf(", \"speedup\": ");
        if (speedup > 0)
            ex_json_double(stdout, speedup);
        else
            printf("null");
        printf("}\n");
    } else {
        printf("Matrix multiply %lld x %lld x %lld, median of the timed runs:\n",
               (long long)args.size, (long long)args.size, (long long)args.size);
        if (cpu)
            print_rec("CPU", cpu);
        if (gpu)
            print_rec("GPU", gpu);
        else if (!args.device)
            printf("GPU: not available (%s)\n", reason);
        if (speedup > 0)
            print_speedup("Speedup", speedup);
        if (table_count)
            print_table(&recs[table_from], table_count);
    }
    for (size_t i = 0; i < nrecs; i++) {
        if (recs[i].st != GPUPROBE_OK && !args.json && (cpu == &recs[i] || gpu == &recs[i]))
            fprintf(stderr, "%s: matmul on %s: %s: %s\n", prog, recs[i].spec,
                    gpuprobe_status_string(recs[i].st), recs[i].error);
        gpuprobe_matmul_result_destroy(recs[i].r);
    }
    gpuprobe_context_destroy(ctx);
    return failed ? EX_FAIL : EX_OK;
}
