/*
 * gpuprobe-bench - the lesson's "GPU vs CPU benchmark", done properly:
 * seeded random inputs, setup and transfers timed apart, warm-up, the
 * median of several timed runs (CUDA events on a GPU), every result
 * verified. On a GPU it also measures the tensor-core precisions of the
 * lesson's "Key terms" (fp32 vs tf32 vs fp16 vs bf16). See
 * gpuprobe-bench(1) and docs/json.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

enum { OPT_SIZE, OPT_DEVICE, OPT_DTYPE, OPT_RUNS, OPT_BATCH, OPT_THREADS, OPT_JSON };

static const cli_option options[] = {
    [OPT_SIZE] = {"size", "N", "multiply N x N matrices (default 5000, the lesson's size)"},
    [OPT_DEVICE] = {"device", "SPEC", "cpu, cuda, cuda:N or auto: that device only (default: CPU, then the best GPU)"},
    [OPT_DTYPE] = {"dtype", "D", "fp32 (default), fp64 (CPU), tf32, fp16, bf16 (CUDA)"},
    [OPT_RUNS] = {"runs", "N", "timed runs (default: 5 or more, up to 0.25 s of timed calls; the median is reported)"},
    [OPT_BATCH] = {"batch", "N", "calls per timed run (default 0: enough calls that a run lasts 2 ms)"},
    [OPT_THREADS] = {"threads", "N", "OpenBLAS threads for the CPU run (default: as configured)"},
    [OPT_JSON] = {"json", NULL, "print one JSON object instead of text"},
    {NULL, NULL, NULL},
};

typedef struct rec {
    char spec[32];
    const char *label; /* "CPU", "GPU" */
    gpuprobe_dtype dtype;
    gpuprobe_status st;
    char error[512];
    gpuprobe_matmul_result *r;
} rec;

#define MAX_RECS 8

static struct {
    int64_t size, runs, batch, threads;
    int dtype_given;
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

static int is_cuda(gpuprobe_context *ctx, size_t device)
{
    int64_t kind = GPUPROBE_DEVICE_CPU;
    gpuprobe_device_get_int(ctx, device, GPUPROBE_ATTR_KIND, &kind);
    return kind == GPUPROBE_DEVICE_CUDA;
}

/* Run one matmul and record it (result or error). */
static rec *run_one(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dt)
{
    rec *x = &recs[nrecs++];
    memset(x, 0, sizeof *x);
    x->dtype = dt;
    x->label = is_cuda(ctx, device) ? "GPU" : "CPU";
    const char *spec = "?";
    gpuprobe_device_get_string(ctx, device, GPUPROBE_ATTR_SPEC, &spec);
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
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, args.batch);
        if (args.threads > 0)
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, args.threads);
        x->st = gpuprobe_matmul_run(ctx, device, o, 0, &x->r);
        gpuprobe_matmul_options_destroy(o);
    }
    if (x->st != GPUPROBE_OK)
        snprintf(x->error, sizeof x->error, "%s", gpuprobe_last_error(ctx));
    return x;
}


/* ---- text ---- */

/* "CPU fp32: 1.81 s  (median of 5 runs, 138.3 GFLOP/s, ...)" and the
 * line of what ran; a precision the device cannot run is said so. */
static void print_rec(const rec *x, const char *note)
{
    const char *dt = gpuprobe_dtype_name(x->dtype);
    if (!x->r) {
        if (x->st == GPUPROBE_ERR_UNSUPPORTED)
            cli_line("%s %s: skipped: %s", x->label, dt, x->error);
        else
            cli_line("%s %s: failed (%s): %s", x->label, dt, gpuprobe_status_string(x->st), x->error);
        return;
    }
    const gpuprobe_matmul_result *r = x->r;
    int64_t verified = iget(r, GPUPROBE_METRIC_VERIFIED);
    char t[32], runs[64];
    cli_seconds(t, sizeof t, dget(r, GPUPROBE_METRIC_MEDIAN_S));
    cli_runs(runs, sizeof runs, r);
    cli_put("%s %s: %s  (%s, %.1f GFLOP/s", x->label, dt, t, runs, dget(r, GPUPROBE_METRIC_GFLOPS));
    double frac = dget(r, GPUPROBE_METRIC_PEAK_FRACTION);
    if (frac > 0)
        cli_put(", %.0f%% of %.0f peak", 100 * frac, dget(r, GPUPROBE_METRIC_PEAK_GFLOPS));
    cli_line(", %s)%s", verified > 0 ? "verified" : verified == 0 ? "VERIFICATION FAILED" : "not verified",
             note ? note : "");
    cli_put("     %s on %s", sget(r, GPUPROBE_METRIC_BACKEND), sget(r, GPUPROBE_METRIC_DEVICE_NAME));
    int64_t threads = iget(r, GPUPROBE_METRIC_THREADS);
    if (threads > 0) {
        cli_put(", %lld thread%s", (long long)threads, threads == 1 ? "" : "s");
        if (args.threads > threads) /* OpenBLAS's own limit */
            cli_put(" (%lld asked for)", (long long)args.threads);
    } else {
        cli_put(", %s, %s", sget(r, GPUPROBE_METRIC_COMPUTE_TYPE), sget(r, GPUPROBE_METRIC_MATH_MODE));
    }
    cli_seconds(t, sizeof t, dget(r, GPUPROBE_METRIC_SETUP_S));
    cli_put("; setup %s", t);
    double h2d = dget(r, GPUPROBE_METRIC_H2D_S), d2h = dget(r, GPUPROBE_METRIC_D2H_S);
    if (h2d > 0 || d2h > 0) {
        char a[32], b[32];
        cli_seconds(a, sizeof a, h2d);
        cli_seconds(b, sizeof b, d2h);
        cli_put(", host->device %s, device->host %s", a, b);
    }
    cli_line("; max error %.2g (tolerance %.2g)", dget(r, GPUPROBE_METRIC_MAX_ERROR),
             dget(r, GPUPROBE_METRIC_TOLERANCE));
}

static void print_table(const rec *rows, size_t count)
{
    const rec *base = NULL;
    for (size_t i = 0; i < count; i++)
        if (rows[i].dtype == GPUPROBE_DTYPE_FP32 && rows[i].r)
            base = &rows[i];
    cli_endl();
    cli_line("Tensor cores (%s, %lld x %lld x %lld, measured):",
             base ? sget(base->r, GPUPROBE_METRIC_DEVICE_NAME) : "GPU", (long long)args.size,
             (long long)args.size, (long long)args.size);
    cli_line("  %-5s %10s %11s %9s  %s", "dtype", "median", "GFLOP/s", "vs fp32", "verified");
    for (size_t i = 0; i < count; i++) {
        const rec *x = &rows[i];
        if (!x->r) {
            cli_line("  %-5s %s: %s", gpuprobe_dtype_name(x->dtype),
                     x->st == GPUPROBE_ERR_UNSUPPORTED ? "skipped" : gpuprobe_status_string(x->st), x->error);
            continue;
        }
        char t[32];
        double med = dget(x->r, GPUPROBE_METRIC_MEDIAN_S);
        double sp = base ? dget(base->r, GPUPROBE_METRIC_MEDIAN_S) / med : 0;
        int64_t v = iget(x->r, GPUPROBE_METRIC_VERIFIED);
        cli_seconds(t, sizeof t, med);
        /* The micro sign is two bytes and one column: pad by columns. */
        int pad = 10 + (strstr(t, "\xc2\xb5") != NULL);
        cli_line("  %-5s %*s %11.1f %8.1fx  %s", gpuprobe_dtype_name(x->dtype), pad, t,
                 dget(x->r, GPUPROBE_METRIC_GFLOPS), sp, v > 0 ? "yes" : v == 0 ? "FAILED" : "-");
    }
}

/* ---- JSON ---- */

static struct json_object *rec_json(const rec *x)
{
    struct json_object *o = cli_obj();
    cli_set_str(o, "device", x->spec);
    cli_set_str(o, "dtype", gpuprobe_dtype_name(x->dtype));
    cli_set_i64(o, "n", args.size);
    if (x->st != GPUPROBE_OK)
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(x->st), x->error));
    else
        cli_set_null(o, "error");
    if (!x->r)
        return o;
    static const struct {
        const char *key;
        gpuprobe_matmul_metric m;
    } d[] = {
        {"median_s", GPUPROBE_METRIC_MEDIAN_S}, {"min_s", GPUPROBE_METRIC_MIN_S},
        {"max_s", GPUPROBE_METRIC_MAX_S}, {"mean_s", GPUPROBE_METRIC_MEAN_S},
        {"stddev_s", GPUPROBE_METRIC_STDDEV_S}, {"gflops", GPUPROBE_METRIC_GFLOPS},
        {"peak_gflops", GPUPROBE_METRIC_PEAK_GFLOPS}, {"peak_fraction", GPUPROBE_METRIC_PEAK_FRACTION},
        {"max_error", GPUPROBE_METRIC_MAX_ERROR}, {"tolerance", GPUPROBE_METRIC_TOLERANCE},
        {"setup_s", GPUPROBE_METRIC_SETUP_S}, {"h2d_s", GPUPROBE_METRIC_H2D_S},
        {"d2h_s", GPUPROBE_METRIC_D2H_S},
    };
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        cli_set_num(o, d[i].key, dget(x->r, d[i].m));
    int64_t v = iget(x->r, GPUPROBE_METRIC_VERIFIED);
    if (v < 0)
        cli_set_null(o, "verified");
    else
        cli_set_bool(o, "verified", v > 0);
    cli_set_i64(o, "runs", iget(x->r, GPUPROBE_METRIC_RUNS));
    cli_set_i64(o, "batch", iget(x->r, GPUPROBE_METRIC_BATCH));
    cli_set_i64(o, "threads", iget(x->r, GPUPROBE_METRIC_THREADS));
    static const struct {
        const char *key;
        gpuprobe_matmul_metric m;
    } s[] = {
        {"device_name", GPUPROBE_METRIC_DEVICE_NAME}, {"backend", GPUPROBE_METRIC_BACKEND},
        {"math_mode", GPUPROBE_METRIC_MATH_MODE}, {"compute_type", GPUPROBE_METRIC_COMPUTE_TYPE},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        cli_set_str(o, s[i].key, sget(x->r, s[i].m));
    return o;
}

/* ---- main ---- */

static int option(int opt, const char *v)
{
    if (opt == OPT_DEVICE) {
        args.device = v;
        return CLI_EXIT_OK;
    }
    if (opt == OPT_DTYPE) {
        if (gpuprobe_dtype_parse(v, &args.dtype) != GPUPROBE_OK || args.dtype > GPUPROBE_DTYPE_BF16)
            return cli_bad_value(v, "--dtype wants fp32, fp64, tf32, fp16 or bf16");
        args.dtype_given = 1;
        return CLI_EXIT_OK;
    }
    gpuprobe_matmul_param p = opt == OPT_SIZE    ? GPUPROBE_MATMUL_M
                              : opt == OPT_RUNS  ? GPUPROBE_MATMUL_MIN_RUNS
                              : opt == OPT_BATCH ? GPUPROBE_MATMUL_BATCH
                                                 : GPUPROBE_MATMUL_CPU_THREADS;
    int64_t lo = 1, hi = INT32_MAX;
    uint64_t n = 0;
    gpuprobe_matmul_param_bounds(p, &lo, &hi);
    if (lo < 1 && opt != OPT_BATCH) /* --batch 0: automatic */
        lo = 1;
    if (cli_parse_count(v, (uint64_t)hi, &n) != 0 || n < (uint64_t)lo)
        return cli_bad_value(v, "--%s wants a whole number from %lld to %lld", options[opt].name,
                             (long long)lo, (long long)hi);
    *(opt == OPT_SIZE    ? &args.size
      : opt == OPT_RUNS  ? &args.runs
      : opt == OPT_BATCH ? &args.batch
                         : &args.threads) = (int64_t)n;
    return CLI_EXIT_OK;
}

/* What was run: the CPU and GPU runs, and the tensor-core table's rows. */
typedef struct plan {
    const rec *cpu, *gpu;
    size_t table_from, table_count;
    const char *why_no_gpu; /* the reason there is no GPU run, or NULL */
    char gpu_reason[640];   /* a selection's message, when that is why */
    gpuprobe_cuda_cause cause;
    const char *detail;     /* the CUDA detail, valid until the next failed call */
} plan;

/* The precisions only a GPU runs: the CPU then runs fp32, as the speedup's
 * reference, and says so. */
static int gpu_only(gpuprobe_dtype dt)
{
    return dt == GPUPROBE_DTYPE_TF32 || dt == GPUPROBE_DTYPE_FP16 || dt == GPUPROBE_DTYPE_BF16;
}

/* The header, before the work (which takes a while: 13 s at the lesson's
 * size on a laptop), so that a terminal shows what is being done. */
static void header(void)
{
    if (cli_json())
        return;
    cli_line("Matrix multiply %lld x %lld x %lld, median of the timed runs:", (long long)args.size,
             (long long)args.size, (long long)args.size);
    fflush(stdout);
}

/* --device: that device only, in the precision asked for. */
static int run_device(gpuprobe_context *ctx, plan *p)
{
    size_t dev = 0;
    /* An explicit --device wins over GPUPROBE_DEVICE. */
    gpuprobe_status st = gpuprobe_select(ctx, args.device, NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL);
    if (st != GPUPROBE_OK) {
        int rc = cli_fail(ctx, st, "--device %s", args.device);
        return st == GPUPROBE_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : rc;
    }
    header();
    if (is_cuda(ctx, dev))
        p->gpu = run_one(ctx, dev, args.dtype);
    else
        p->cpu = run_one(ctx, dev, args.dtype);
    return CLI_EXIT_OK;
}

/* The runs: --device's device only, or the CPU then the best GPU; on a GPU
 * without --dtype, the tensor-core table too. Returns CLI_EXIT_OK, or the
 * exit status when --device names no usable device. */
static int run_all(gpuprobe_context *ctx, plan *p)
{
    p->cause = GPUPROBE_CUDA_NOT_BUILT;
    p->detail = "";
    gpuprobe_cuda_status(ctx, &p->cause, &p->detail);
    if (args.device)
        return run_device(ctx, p);
    size_t dev = 0;
    header();
    p->cpu = run_one(ctx, 0, args.dtype == GPUPROBE_DTYPE_FP64 ? GPUPROBE_DTYPE_FP64 : GPUPROBE_DTYPE_FP32);
    if (p->cause != GPUPROBE_CUDA_AVAILABLE) {
        p->why_no_gpu = "";
    } else if (gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL) != GPUPROBE_OK) {
        snprintf(p->gpu_reason, sizeof p->gpu_reason, "%s", gpuprobe_last_error(ctx));
        p->why_no_gpu = p->gpu_reason;
    } else {
        p->gpu = run_one(ctx, dev, args.dtype);
        /* The lesson's "Key terms" tensor-core table, measured. */
        if (!args.dtype_given) {
            static const gpuprobe_dtype tc[] = {GPUPROBE_DTYPE_TF32, GPUPROBE_DTYPE_FP16,
                                                GPUPROBE_DTYPE_BF16};
            p->table_from = (size_t)(p->gpu - recs);
            for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++)
                run_one(ctx, dev, tc[i]);
            p->table_count = nrecs - p->table_from;
        }
    }
    return CLI_EXIT_OK;
}

/* GPU median / CPU median, when both ran; else 0. */
static double speedup_of(const plan *p)
{
    if (!p->cpu || !p->gpu || !p->cpu->r || !p->gpu->r)
        return 0;
    return dget(p->cpu->r, GPUPROBE_METRIC_MEDIAN_S) / dget(p->gpu->r, GPUPROBE_METRIC_MEDIAN_S);
}

static int print_json(const plan *p)
{
    struct json_object *doc = cli_doc();
    cli_set_i64(doc, "size", args.size);
    cli_cuda_json(doc, p->cause, p->detail);
    if (p->why_no_gpu && p->why_no_gpu[0]) /* CUDA works, but no GPU could be chosen */
        cli_set_str(doc, "reason_text", p->why_no_gpu);
    double speedup = speedup_of(p);
    if (speedup > 0) {
        cli_set_num(doc, "speedup", speedup);
        cli_set_str(doc, "speedup_cpu_dtype", gpuprobe_dtype_name(p->cpu->dtype));
        cli_set_str(doc, "speedup_gpu_dtype", gpuprobe_dtype_name(p->gpu->dtype));
    } else {
        cli_set_null(doc, "speedup");
        cli_set_null(doc, "speedup_cpu_dtype");
        cli_set_null(doc, "speedup_gpu_dtype");
    }
    if (args.threads > 0)
        cli_set_i64(doc, "threads_requested", args.threads);
    else
        cli_set_null(doc, "threads_requested");
    struct json_object *results = cli_arr();
    for (size_t i = 0; i < nrecs; i++)
        cli_push(results, rec_json(&recs[i]));
    cli_set(doc, "results", results);
    return cli_print_doc(doc);
}

/* What the CPU row compares with, when the GPU runs a precision the CPU
 * does not. */
static const char *cpu_note(const plan *p)
{
    static char note[96];
    if (!p->cpu || args.device || !gpu_only(args.dtype))
        return NULL;
    snprintf(note, sizeof note, " [the CPU runs no %s: fp32 is the reference]",
             gpuprobe_dtype_name(args.dtype));
    return note;
}

static void print_text(const plan *p)
{
    if (p->cpu)
        print_rec(p->cpu, cpu_note(p));
    if (p->gpu)
        print_rec(p->gpu, NULL);
    else if (p->why_no_gpu)
        cli_line("GPU %s: not available (%s%s%s)", gpuprobe_dtype_name(args.dtype),
                 p->why_no_gpu[0] ? "" : gpuprobe_cuda_cause_string(p->cause),
                 p->why_no_gpu[0] || !p->detail[0] ? "" : ": ",
                 p->why_no_gpu[0] ? p->why_no_gpu : p->detail);
    double speedup = speedup_of(p);
    if (speedup > 0)
        cli_line("Speedup (GPU %s vs CPU %s): %.*fx", gpuprobe_dtype_name(p->gpu->dtype),
                 gpuprobe_dtype_name(p->cpu->dtype), speedup >= 10 ? 0 : 1, speedup);
    if (p->table_count)
        print_table(&recs[p->table_from], p->table_count);
}

/* Reports each failed run on stderr; 1 when one failed. A precision a
 * device cannot run is a failure only where it was asked of that device
 * alone (--device), or when no device ran it at all. */
static int failures(const plan *p)
{
    int failed = 0, asked_ran = 0;
    for (size_t i = 0; i < nrecs; i++) {
        const rec *x = &recs[i];
        asked_ran |= x->st == GPUPROBE_OK && x->dtype == args.dtype;
        int skipped = x->st == GPUPROBE_ERR_UNSUPPORTED && !args.device;
        if (x->st == GPUPROBE_OK || skipped)
            continue;
        failed = 1;
        cli_err("matmul on %s (%s): %s: %s", x->spec, gpuprobe_dtype_name(x->dtype),
                gpuprobe_status_string(x->st), x->error);
    }
    if (!args.device && !asked_ran && args.dtype_given) {
        cli_err("no device here ran %s%s", gpuprobe_dtype_name(args.dtype),
                p->gpu ? "" : " (no usable CUDA GPU)");
        failed = 1;
    }
    return failed;
}

static int run(gpuprobe_context *ctx)
{
    plan p;
    memset(&p, 0, sizeof p);
    int rc = run_all(ctx, &p);
    int failed = rc == CLI_EXIT_OK && failures(&p);
    if (rc == CLI_EXIT_OK && cli_json())
        rc = print_json(&p);
    else if (rc == CLI_EXIT_OK)
        print_text(&p);
    for (size_t i = 0; i < nrecs; i++)
        gpuprobe_matmul_result_destroy(recs[i].r);
    return rc != CLI_EXIT_OK ? rc : failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static const cli_command command = {
    "gpuprobe-bench",
    "Time an N x N matrix multiplication on the CPU and the best GPU (the\n"
    "lesson's benchmark): warm-up, median of timed runs, results verified.",
    options,
    "a run failed or its result did not verify, or --device names no usable device",
    "See gpuprobe-bench(1).",
    option,
    NULL,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
