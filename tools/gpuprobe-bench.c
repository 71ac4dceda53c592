/*
 * gpuprobe-bench - the lesson's "GPU vs CPU benchmark", done properly:
 * seeded random inputs, setup and transfers timed apart, warm-up, the
 * median of several timed runs (CUDA events on a GPU), every result
 * verified. On a GPU it also measures the tensor-core precisions of the
 * lesson's "Key terms" (fp32 vs tf32 vs fp16 vs bf16). With --sweep it
 * times every size of a doubling series on each device and precision, as a
 * table, JSON or a picture (--plot); with --bandwidth it measures memory
 * and host-link bandwidth instead (docs/bandwidth.md). See
 * gpuprobe-bench(1), docs/json.md and docs/pictures.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OPT_SIZE, OPT_DEVICE, OPT_DTYPE, OPT_RUNS, OPT_BATCH, OPT_THREADS, OPT_SWEEP, OPT_BUDGET,
       OPT_PLOT, OPT_ROOFLINE, OPT_BANDWIDTH, OPT_BYTES, OPT_JSON };

static const cli_option options[] = {
    [OPT_SIZE] = {"size", "N", "multiply N x N matrices (default 5000, the lesson's size)", 0},
    [OPT_DEVICE] = {"device", "SPEC", "cpu, cuda, cuda:N or auto: that device only (default: CPU, then the best GPU); with --sweep a list: cpu,cuda:0", 0},
    [OPT_DTYPE] = {"dtype", "D", "fp32 (default), fp64 (CPU), tf32, fp16 (CUDA), bf16 (CUDA; the CPU with AMX or AVX512-BF16); with --sweep a list: fp32,bf16", 0},
    [OPT_RUNS] = {"runs", "N", "timed runs (default: 5 or more, up to 0.25 s of timed calls; the median is reported)", 0},
    [OPT_BATCH] = {"batch", "N", "calls per timed run (default 0: enough calls that a run lasts 2 ms)", 0},
    [OPT_THREADS] = {"threads", "N", "CPU threads of the run (OpenBLAS's, default as configured; bf16: one per CPU); with --bandwidth, CPU threads (default: one per core)", 0},
    [OPT_SWEEP] = {"sweep", "[FROM..TO]", "every size from FROM to TO, doubling (default 64..8192 on a GPU, 64..4096 on the CPU)", 0},
    [OPT_BUDGET] = {"budget", "SECONDS", "with --sweep: the time each device and precision may take (default 60; 20 with --roofline)", 0},
    [OPT_PLOT] = {"plot", "FILE", "with --sweep: draw GFLOP/s against N into FILE (.png, .svg or .pdf)", 0},
    [OPT_ROOFLINE] = {"roofline", "FILE", "draw each device's roofline into FILE (.png, .svg or .pdf): a sweep and a bandwidth run, measured roofs and peaks", 0},
    [OPT_BANDWIDTH] = {"bandwidth", NULL, "measure memory and host-link bandwidth instead (read, copy, triad; GPU transfers)", 0},
    [OPT_BYTES] = {"bytes", "SIZE", "with --bandwidth or --roofline: bytes of each buffer, e.g. 1GiB (default: by the size rule)", 0},
    [OPT_JSON] = {"json", NULL, "print one JSON object instead of text", 0},
    {NULL, NULL, NULL, 0},
};

typedef struct rec {
    char spec[32];
    const char *label; /* "CPU", "GPU" */
    gpuprobe_dtype dtype;
    int64_t n;
    gpuprobe_status st;
    char error[512];
    gpuprobe_matmul_result *r;
    double wall_s; /* the whole call, setup and verification included */
} rec;

#define MAX_RECS 8
#define MAX_DTYPES 5 /* fp32, fp64, tf32, fp16, bf16 */

static struct {
    int64_t size, runs, batch, threads;
    int dtype_given, size_given;
    gpuprobe_dtype dtype;           /* the first of dtypes */
    gpuprobe_dtype dtypes[MAX_DTYPES];
    size_t ndtypes;
    const char *device;
    int sweep;
    int64_t from, to;               /* --sweep's range; 0: each device's default */
    int64_t budget_s;
    const char *plot;
    int bandwidth, batch_given;
    uint64_t bytes;
    const char *roofline;           /* --roofline's file */
} args = {5000, 0, 0, 0, 0, 0, GPUPROBE_DTYPE_FP32, {GPUPROBE_DTYPE_FP32}, 1, NULL, 0, 0, 0, 60, NULL,
          0, 0, 0, NULL};

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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run one n x n x n matmul into *x (result or error). */
static void run_matmul(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dt, int64_t n, rec *x)
{
    memset(x, 0, sizeof *x);
    x->dtype = dt;
    x->n = n;
    x->label = is_cuda(ctx, device) ? "GPU" : "CPU";
    const char *spec = "?";
    gpuprobe_device_get_string(ctx, device, GPUPROBE_ATTR_SPEC, &spec);
    snprintf(x->spec, sizeof x->spec, "%s", spec);

    gpuprobe_matmul_options *o = NULL;
    x->st = gpuprobe_matmul_options_create(&o);
    if (x->st == GPUPROBE_OK) {
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, n);
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
        if (args.runs > 0) {
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, args.runs);
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, args.runs);
        }
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, args.batch);
        if (args.threads > 0)
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, args.threads);
        double t0 = now_s();
        x->st = gpuprobe_matmul_run(ctx, device, o, 0, &x->r);
        x->wall_s = now_s() - t0;
        gpuprobe_matmul_options_destroy(o);
    }
    if (x->st != GPUPROBE_OK)
        snprintf(x->error, sizeof x->error, "%s", gpuprobe_last_error(ctx));
}

/* About how long the library's timed matmul of n takes on device: one
 * call timed at a smaller size (at most 1024; no warm-up search, no
 * verification), grown as n^3, times the calls the protocol makes (a
 * warm-up call, the timed runs: --runs, else at least 5 and more until
 * 0.25 s; the search for the steady state when a call is short). 0 when
 * the small call fails. */
static double expected_s(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dt, int64_t n)
{
    int64_t n0 = n < 1024 ? n : 1024; /* large enough to run near full speed */
    gpuprobe_matmul_options *o = NULL;
    gpuprobe_matmul_result *r = NULL;
    if (gpuprobe_matmul_options_create(&o) != GPUPROBE_OK)
        return 0;
    static const struct {
        gpuprobe_matmul_param p;
        int64_t v;
    } quick[] = {{GPUPROBE_MATMUL_MIN_RUNS, 1}, {GPUPROBE_MATMUL_MAX_RUNS, 1},
                 {GPUPROBE_MATMUL_BUDGET_MS, 0}, {GPUPROBE_MATMUL_WARMUP_MS, 0},
                 {GPUPROBE_MATMUL_VERIFY, 0},    {GPUPROBE_MATMUL_TRANSFERS, 0},
                 {GPUPROBE_MATMUL_BATCH, 1}};
    for (size_t i = 0; i < sizeof quick / sizeof quick[0]; i++)
        gpuprobe_matmul_options_set(o, quick[i].p, quick[i].v);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, n0);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
    if (args.threads > 0)
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, args.threads);
    double t = 0;
    if (gpuprobe_matmul_run(ctx, device, o, 0, &r) == GPUPROBE_OK)
        t = dget(r, GPUPROBE_METRIC_MEDIAN_S) * ((double)n / (double)n0) * ((double)n / (double)n0) *
            ((double)n / (double)n0);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    if (!(t > 0))
        return 0;
    double runs = args.runs > 0 ? (double)args.runs : 5;
    if (args.runs == 0 && runs * t < 0.25)
        runs = 0.25 / t;
    /* The search: two windows that agree, each 50 ms of runs or one run;
     * at most 1 s. */
    double window = t > 0.05 ? t : 0.05;
    double search = 2 * window < 1.0 ? 2 * window : 1.0;
    return (1 + runs) * t + (t < 0.5 ? search : 0);
}

/* Run one matmul of --size and record it, with progress on a terminal. */
static rec *run_one(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dt)
{
    rec *x = &recs[nrecs++];
    if (cli_progress_wanted()) {
        char what[96];
        snprintf(what, sizeof what, "%s %s, %lld x %lld", is_cuda(ctx, device) ? "GPU" : "CPU",
                 gpuprobe_dtype_name(dt), (long long)args.size, (long long)args.size);
        cli_progress_begin(what, expected_s(ctx, device, dt, args.size));
    }
    run_matmul(ctx, device, dt, args.size, x);
    cli_progress_end();
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
    cli_set_i64(o, "n", x->n);
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

/* --dtype: one precision, or with --sweep a comma list of them. */
static int dtype_option(const char *v)
{
    args.ndtypes = 0;
    for (const char *p = v;; p++) {
        size_t len = strcspn(p, ",");
        char one[16];
        gpuprobe_dtype dt = GPUPROBE_DTYPE_FP32;
        if (len > 0 && len < sizeof one) {
            memcpy(one, p, len);
            one[len] = '\0';
        }
        if (len == 0 || len >= sizeof one || gpuprobe_dtype_parse(one, &dt) != GPUPROBE_OK ||
            dt > GPUPROBE_DTYPE_BF16)
            return cli_bad_dtype(v, "dtype", GP_DTYPES_MATMUL, " (with --sweep a comma list of them)");
        size_t i = 0;
        while (i < args.ndtypes && args.dtypes[i] != dt)
            i++;
        if (i == args.ndtypes) /* five distinct at most: no overflow */
            args.dtypes[args.ndtypes++] = dt;
        p += len;
        if (!*p)
            break;
    }
    args.dtype = args.dtypes[0];
    args.dtype_given = 1;
    return CLI_EXIT_OK;
}

/* --sweep [FROM..TO]: sizes the library takes. */
static int sweep_option(const char *v)
{
    int64_t lo = 1, hi = INT32_MAX;
    uint64_t from = 0, to = 0;
    args.sweep = 1;
    if (!v)
        return CLI_EXIT_OK;
    gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_M, &lo, &hi);
    if (cli_parse_range(v, (uint64_t)hi, &from, &to) != 0 || from < (uint64_t)(lo > 1 ? lo : 1))
        return cli_bad_value(v, "--sweep wants FROM..TO, two sizes from 1 to %lld with FROM <= TO "
                                "(e.g. 64..4096)", (long long)hi);
    args.from = (int64_t)from;
    args.to = (int64_t)to;
    return CLI_EXIT_OK;
}

static int budget_given;

static int option(int opt, const char *v)
{
    if (opt == OPT_DEVICE) {
        args.device = v;
        return CLI_EXIT_OK;
    }
    if (opt == OPT_DTYPE)
        return dtype_option(v);
    if (opt == OPT_SWEEP)
        return sweep_option(v);
    if (opt == OPT_PLOT || opt == OPT_ROOFLINE) {
        *(opt == OPT_PLOT ? &args.plot : &args.roofline) = v;
        return CLI_EXIT_OK;
    }
    if (opt == OPT_BUDGET) {
        uint64_t s = 0;
        if (cli_parse_count(v, 604800, &s) != 0 || s < 1)
            return cli_bad_value(v, "--budget wants a whole number of seconds from 1 to 604800");
        args.budget_s = (int64_t)s;
        budget_given = 1;
        return CLI_EXIT_OK;
    }
    if (opt == OPT_BANDWIDTH) {
        args.bandwidth = 1;
        return CLI_EXIT_OK;
    }
    if (opt == OPT_BYTES) {
        int64_t lo = 0, hi = 0;
        gpuprobe_bandwidth_param_bounds(GPUPROBE_BANDWIDTH_BUFFER_BYTES, &lo, &hi);
        if (cli_parse_size(v, (uint64_t)hi, &args.bytes) != 0 || args.bytes < 4096)
            return cli_bad_value(v, "--bytes wants a size from 4096 bytes to 1TiB, e.g. 512MiB");
        return CLI_EXIT_OK;
    }
    args.batch_given |= opt == OPT_BATCH;
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
    args.size_given |= opt == OPT_SIZE;
    return CLI_EXIT_OK;
}

/* What the options mean together: lists, --budget and --plot belong to a
 * sweep; --plot needs a file name this build can draw (SVG only without
 * cairo). */
static int matmul_check(void)
{
    int refused = args.plot ? cli_plot_refuse("--plot", args.plot) : CLI_EXIT_OK;
    if (refused == CLI_EXIT_OK && args.roofline)
        refused = cli_plot_refuse("--roofline", args.roofline);
    if (refused != CLI_EXIT_OK)
        return refused;
    if (!args.sweep) {
        const char *alone = args.ndtypes > 1                          ? "--dtype takes a list only with --sweep"
                            : args.device && strchr(args.device, ',') ? "--device takes a list only with --sweep"
                            : args.plot                               ? "--plot draws a sweep: add --sweep"
                            : budget_given                            ? "--budget bounds a sweep: add --sweep"
                                                                      : NULL;
        return alone ? cli_usage_error("%s", alone) : CLI_EXIT_OK;
    }
    if (args.size_given)
        return cli_usage_error("--size and --%s do not go together: --sweep FROM..TO gives the sizes",
                               args.roofline ? "roofline" : "sweep");
    if (args.plot && cli_plot_format_of(args.plot) < 0)
        return cli_bad_value(args.plot, "--plot wants a file name ending in .png, .svg or .pdf");
    if (args.roofline && cli_plot_format_of(args.roofline) < 0)
        return cli_bad_value(args.roofline, "--roofline wants a file name ending in .png, .svg or .pdf");
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
    /* The CPU in the precision asked where it runs it (fp64; bf16 with AMX
     * or AVX512-BF16), else in fp32, the reference, and its line says so. */
    const gpuprobe_dtype asked = args.dtype;
    p->cpu = run_one(ctx, 0, asked == GPUPROBE_DTYPE_FP64 || asked == GPUPROBE_DTYPE_BF16
                                 ? asked : GPUPROBE_DTYPE_FP32);
    if (asked == GPUPROBE_DTYPE_BF16 && p->cpu->st == GPUPROBE_ERR_UNSUPPORTED) {
        gpuprobe_matmul_result_destroy(p->cpu->r);
        nrecs--;
        p->cpu = run_one(ctx, 0, GPUPROBE_DTYPE_FP32);
    }
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

/* The members of every document: the CUDA answer (and, when CUDA works
 * but no GPU could be chosen, why not), the speedup of gpu over cpu when
 * there is one, the threads asked for. */
static void doc_common(struct json_object *doc, gpuprobe_cuda_cause cause, const char *detail,
                       const char *why_no_gpu, double speedup, const rec *cpu, const rec *gpu)
{
    cli_cuda_json(doc, cause, detail);
    if (why_no_gpu && why_no_gpu[0])
        cli_set_str(doc, "reason_text", why_no_gpu);
    if (speedup > 0) {
        cli_set_num(doc, "speedup", speedup);
        cli_set_str(doc, "speedup_cpu_dtype", gpuprobe_dtype_name(cpu->dtype));
        cli_set_str(doc, "speedup_gpu_dtype", gpuprobe_dtype_name(gpu->dtype));
    } else {
        cli_set_null(doc, "speedup");
        cli_set_null(doc, "speedup_cpu_dtype");
        cli_set_null(doc, "speedup_gpu_dtype");
    }
    if (args.threads > 0)
        cli_set_i64(doc, "threads_requested", args.threads);
    else
        cli_set_null(doc, "threads_requested");
}

static int print_json(const plan *p)
{
    struct json_object *doc = cli_doc();
    cli_set_i64(doc, "size", args.size);
    doc_common(doc, p->cause, p->detail, p->why_no_gpu, speedup_of(p), p->cpu, p->gpu);
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
    if (!p->cpu || args.device || p->cpu->dtype == args.dtype)
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

/* ---- --sweep: every size of a doubling series, each device and precision ---- */

/* Why a line of the sweep ended (the JSON token, and the text's words). */
enum { STOP_DONE, STOP_MEMORY, STOP_TIME, STOP_FAILED, STOP_UNSUPPORTED };
static const char *const stop_token[] = {"done", "memory", "time", "failed", "unsupported"};

/* One device in one precision, over the sizes. */
typedef struct line {
    size_t device;
    int gpu;
    char spec[32], name[128];
    gpuprobe_dtype dtype;
    int64_t from, to;
    rec *pts;            /* every run, in order; the last may have failed */
    size_t n;
    int stop;
    int64_t stop_n;      /* the size not measured, or 0 */
    double predicted_s;  /* STOP_TIME: what that size would have taken */
    double seconds;      /* the runs' wall time */
} line;

#define MAX_SWEEP_DEVICES 16
#define MAX_SIZES 40

static struct {
    line *lines;
    size_t n;
    gpuprobe_cuda_cause cause;
    char detail[640];     /* the CUDA detail, copied: later failures overwrite it */
    char why_no_gpu[640]; /* CUDA works but no GPU could be chosen: why */
    int progress;         /* progress on stderr (a terminal) */
    double load[2];       /* the 1-minute load average before and after; -1: unknown */
    int64_t cpus;         /* logical CPUs */
} sw;

/* The 1-minute load average (/proc/loadavg), or -1: what else ran on the
 * machine shows in the figures, so the sweep says it. */
static double load_average(void)
{
    double v = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &v) != 1 || !(v >= 0))
            v = -1;
        fclose(f);
    }
    return v;
}

/* "1-minute load average 5.36 before, 6.10 after, on 2 logical CPUs", or
 * "" when unknown. */
static void load_text(char *buf, size_t size)
{
    buf[0] = '\0';
    if (sw.load[0] >= 0 && sw.load[1] >= 0)
        snprintf(buf, size, "1-minute load average %.2f before, %.2f after, on %lld logical CPUs",
                 sw.load[0], sw.load[1], (long long)sw.cpus);
}

/* from, 2 from, 4 from ... up to to, and to itself when the doubling
 * misses it. Returns the count (at most max). */
static size_t sweep_sizes(int64_t from, int64_t to, int64_t *out, size_t max)
{
    size_t n = 0;
    for (int64_t s = from; s <= to && n < max; s = s > to / 2 ? to + 1 : 2 * s)
        out[n++] = s;
    if (n < max && out[n - 1] != to)
        out[n++] = to;
    return n;
}

/* The library's default for a matmul parameter (the protocol's minimum
 * runs, warm-up and timing budget, whatever they become). */
static int64_t protocol(gpuprobe_matmul_param p)
{
    int64_t v = 0;
    gpuprobe_matmul_options *o = NULL;
    if (gpuprobe_matmul_options_create(&o) == GPUPROBE_OK)
        gpuprobe_matmul_options_get(o, p, &v);
    gpuprobe_matmul_options_destroy(o);
    return v;
}

/* The time the size n would take, from the last run at a smaller size:
 * per call the work grows as n^3; the protocol's timed runs take at least
 * their minimum count of calls and, unless --runs fixes the count, at
 * least its timing budget; the warm-up and the calibration call grow as
 * the calls do, and the rest (allocation, inputs, verification, copies)
 * as n^2. */
static double predict_s(const rec *last, int64_t n)
{
    int64_t min_runs = protocol(GPUPROBE_MATMUL_MIN_RUNS), warmup = protocol(GPUPROBE_MATMUL_WARMUP);
    int64_t budget_ms = protocol(GPUPROBE_MATMUL_BUDGET_MS);
    double r = (double)n / (double)last->n, t = dget(last->r, GPUPROBE_METRIC_MEDIAN_S);
    double t_new = t * r * r * r;
    double runs = (double)(args.runs > 0 ? args.runs : min_runs);
    double timed = runs * t_new;
    if (args.runs == 0 && timed < (double)budget_ms / 1000)
        timed = (double)budget_ms / 1000;
    double calls_last = (double)(iget(last->r, GPUPROBE_METRIC_RUNS) * iget(last->r, GPUPROBE_METRIC_BATCH));
    double rest = last->wall_s - (calls_last + (double)warmup + 1) * t;
    return timed + ((double)warmup + 1) * t_new + (rest > 0 ? rest * r * r : 0);
}

static void progress(const line *l, int64_t n)
{
    if (!sw.progress)
        return;
    /* Straight to the terminal, overwriting itself: the device spec and
     * the precision's name are plain ASCII. */
    fprintf(stderr, "\r%s: %s %s, n = %lld ...\033[K", cli_prog(), l->spec,
            gpuprobe_dtype_name(l->dtype), (long long)n);
    fflush(stderr);
}

/* The sizes of one line, in order, until one does not fit, fails, or would
 * take the line past its budget. */
static void run_line(gpuprobe_context *ctx, line *l)
{
    int64_t sizes[MAX_SIZES];
    size_t count = sweep_sizes(l->from, l->to, sizes, MAX_SIZES);
    l->pts = calloc(count, sizeof *l->pts);
    if (!l->pts) {
        l->stop = STOP_FAILED;
        return;
    }
    for (size_t i = 0; i < count; i++) {
        if (l->n > 0) {
            double p = predict_s(&l->pts[l->n - 1], sizes[i]);
            if (l->seconds + p > (double)args.budget_s) {
                l->stop = STOP_TIME;
                l->stop_n = sizes[i];
                l->predicted_s = p;
                return;
            }
        }
        progress(l, sizes[i]);
        rec *x = &l->pts[l->n++];
        run_matmul(ctx, l->device, l->dtype, sizes[i], x);
        l->seconds += x->wall_s;
        if (x->st == GPUPROBE_OK)
            continue;
        l->stop = x->st == GPUPROBE_ERR_UNSUPPORTED                   ? STOP_UNSUPPORTED
                  : x->st == GPUPROBE_ERR_OUT_OF_MEMORY ||
                            x->st == GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY ? STOP_MEMORY
                                                                       : STOP_FAILED;
        l->stop_n = sizes[i];
        return;
    }
    l->stop = STOP_DONE;
}

/* A new line for device dev in dt (NULL when out of memory). */
static line *new_line(gpuprobe_context *ctx, size_t dev, gpuprobe_dtype dt)
{
    line *more = realloc(sw.lines, (sw.n + 1) * sizeof *more);
    if (!more)
        return NULL;
    sw.lines = more;
    line *l = &sw.lines[sw.n++];
    memset(l, 0, sizeof *l);
    l->device = dev;
    l->dtype = dt;
    l->gpu = is_cuda(ctx, dev);
    const char *s = "?";
    gpuprobe_device_get_string(ctx, dev, GPUPROBE_ATTR_SPEC, &s);
    snprintf(l->spec, sizeof l->spec, "%s", s);
    s = l->gpu ? "GPU" : "CPU";
    gpuprobe_device_get_string(ctx, dev, GPUPROBE_ATTR_NAME, &s);
    snprintf(l->name, sizeof l->name, "%s", s);
    l->from = args.from ? args.from : 64;
    l->to = args.to ? args.to : l->gpu ? 8192 : 4096;
    return l;
}

/* The devices: --device's list, or the CPU and the best GPU. Returns
 * CLI_EXIT_OK, or the exit status when a spec names no usable device. */
static int sweep_devices(gpuprobe_context *ctx, size_t *dev, size_t *count)
{
    *count = 0;
    if (!args.device) {
        size_t g = 0;
        dev[(*count)++] = 0;
        if (sw.cause != GPUPROBE_CUDA_AVAILABLE)
            return CLI_EXIT_OK;
        if (gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &g, NULL) == GPUPROBE_OK)
            dev[(*count)++] = g;
        else
            snprintf(sw.why_no_gpu, sizeof sw.why_no_gpu, "%s", gpuprobe_last_error(ctx));
        return CLI_EXIT_OK;
    }
    for (const char *p = args.device;; p++) {
        size_t len = strcspn(p, ","), d = 0;
        char *spec = strndup(p, len);
        gpuprobe_status st = spec ? gpuprobe_select(ctx, spec, NULL, GPUPROBE_SELECT_IGNORE_ENV, &d, NULL)
                                  : GPUPROBE_ERR_OUT_OF_MEMORY;
        if (st != GPUPROBE_OK) {
            int rc = cli_fail(ctx, st, "--device %s", spec ? spec : "?");
            free(spec);
            return st == GPUPROBE_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : rc;
        }
        free(spec);
        size_t i = 0;
        while (i < *count && dev[i] != d) /* a device named twice runs once */
            i++;
        if (i == *count && *count == MAX_SWEEP_DEVICES)
            return cli_usage_error("--device lists more than %d devices", MAX_SWEEP_DEVICES);
        if (i == *count)
            dev[(*count)++] = d;
        p += len;
        if (!*p)
            return CLI_EXIT_OK;
    }
}

/* ---- the sweep as text ---- */

/* A GFLOP/s figure in the table: one decimal from 10 up, three significant
 * digits below (a launch-bound size on a GPU gets a fraction). */
static void gflops_text(char *buf, size_t size, double v)
{
    snprintf(buf, size, v >= 10 ? "%.1f" : "%.3g", v);
}

/* "GPU bf16 on cuda:0 (NVIDIA H200; ...):" or "CPU fp32 (...):", before
 * the table of one line. */
static void line_heading(const line *l, const rec *first)
{
    const char *dt = gpuprobe_dtype_name(l->dtype);
    char peak[48] = "";
    double pk = dget(first->r, GPUPROBE_METRIC_PEAK_GFLOPS);
    if (pk > 0) {
        char v[32];
        cli_axis_label(v, sizeof v, pk, "FLOP/s", 1e9);
        snprintf(peak, sizeof peak, "; peak %s", v);
    }
    if (l->gpu)
        cli_line("GPU %s on %s (%s; %s%s):", dt, l->spec, l->name, sget(first->r, GPUPROBE_METRIC_BACKEND), peak);
    else
        cli_line("CPU %s (%s; %s%s):", dt, l->name, sget(first->r, GPUPROBE_METRIC_BACKEND), peak);
}

static void print_line(const line *l)
{
    const rec *first = NULL;
    for (size_t i = 0; i < l->n && !first; i++)
        if (l->pts[i].r)
            first = &l->pts[i];
    cli_endl();
    if (!first) { /* nothing measured: why */
        const char *error = l->n ? l->pts[0].error : "out of memory";
        char what[64];
        snprintf(what, sizeof what, "%s %s%s%s", l->gpu ? "GPU" : "CPU", gpuprobe_dtype_name(l->dtype),
                 l->gpu ? " on " : "", l->gpu ? l->spec : "");
        if (l->stop == STOP_MEMORY)
            cli_line("%s: n = %lld does not fit in memory: %s", what, (long long)l->stop_n, error);
        else
            cli_line("%s: %s: %s", what, l->stop == STOP_UNSUPPORTED ? "skipped" : "failed", error);
        return;
    }
    line_heading(l, first);
    cli_line("  %6s %10s %11s %8s  %s", "n", "median", "GFLOP/s", "of peak", "verified");
    for (size_t i = 0; i < l->n; i++) {
        const rec *x = &l->pts[i];
        if (!x->r) {
            cli_line("  %6lld  %s: %s", (long long)x->n,
                     l->stop == STOP_MEMORY ? "does not fit" : gpuprobe_status_string(x->st), x->error);
            continue;
        }
        char t[32], g[32], frac[16] = "-";
        cli_seconds(t, sizeof t, dget(x->r, GPUPROBE_METRIC_MEDIAN_S));
        gflops_text(g, sizeof g, dget(x->r, GPUPROBE_METRIC_GFLOPS));
        double f = dget(x->r, GPUPROBE_METRIC_PEAK_FRACTION);
        if (f > 0)
            snprintf(frac, sizeof frac, f < 0.005 ? "<1%%" : "%.0f%%", 100 * f);
        int64_t v = iget(x->r, GPUPROBE_METRIC_VERIFIED);
        int pad = 10 + (strstr(t, "\xc2\xb5") != NULL); /* the micro sign: two bytes, one column */
        cli_line("  %6lld %*s %11s %8s  %s", (long long)x->n, pad, t, g, frac,
                 v > 0 ? "yes" : v == 0 ? "FAILED" : "-");
    }
    char took[32];
    cli_seconds(took, sizeof took, l->seconds);
    if (l->stop == STOP_TIME) {
        char p[32];
        cli_seconds(p, sizeof p, l->predicted_s);
        cli_line("  stopped before %lld: it would take about %s, past the %lld s budget (--budget)",
                 (long long)l->stop_n, p, (long long)args.budget_s);
    } else if (l->stop == STOP_DONE) {
        cli_line("  every size from %lld to %lld, in %s", (long long)l->from, (long long)l->to, took);
    }
}

/* --roofline (below the bandwidth's code, which it uses). */
static void roofline_measure(gpuprobe_context *ctx, const size_t *dev, size_t ndev);
static int roofline_plot(void);
static void roofline_text(void);
static void roofline_json(struct json_object *doc, int drawn);
static int roofline_failures(void);
static void roofline_free(void);

static void print_sweep_text(void)
{
    for (size_t i = 0; i < sw.n; i++)
        print_line(&sw.lines[i]);
    if (!args.device && sw.cause != GPUPROBE_CUDA_AVAILABLE) {
        cli_endl();
        cli_line("GPU: not available (%s%s%s)", gpuprobe_cuda_cause_string(sw.cause),
                 sw.detail[0] ? ": " : "", sw.detail);
    } else if (sw.why_no_gpu[0]) {
        cli_endl();
        cli_line("GPU: not available (%s)", sw.why_no_gpu);
    }
    char load[128];
    load_text(load, sizeof load);
    if (load[0]) {
        cli_endl();
        cli_line("Machine load: %s.", load);
    }
}

/* ---- the sweep as JSON ---- */

static int print_sweep_json(int drawn, int roof_drawn)
{
    struct json_object *doc = cli_doc();
    doc_common(doc, sw.cause, sw.detail, sw.why_no_gpu, 0, NULL, NULL);
    struct json_object *results = cli_arr(), *lines = cli_arr(), *sweep = cli_obj();
    for (size_t i = 0; i < sw.n; i++) {
        const line *l = &sw.lines[i];
        struct json_object *o = cli_obj();
        cli_set_str(o, "device", l->spec);
        cli_set_str(o, "device_name", l->name);
        cli_set_str(o, "dtype", gpuprobe_dtype_name(l->dtype));
        cli_set_i64(o, "from", l->from);
        cli_set_i64(o, "to", l->to);
        cli_set_str(o, "stopped", stop_token[l->stop]);
        if (l->stop_n)
            cli_set_i64(o, "stopped_at", l->stop_n);
        else
            cli_set_null(o, "stopped_at");
        if (l->stop == STOP_TIME)
            cli_set_num(o, "predicted_s", l->predicted_s);
        else
            cli_set_null(o, "predicted_s");
        cli_set_num(o, "seconds", l->seconds);
        cli_push(lines, o);
        for (size_t k = 0; k < l->n; k++)
            cli_push(results, rec_json(&l->pts[k]));
    }
    cli_set_i64(sweep, "budget_s", args.budget_s);
    for (int i = 0; i < 2; i++) {
        const char *key = i ? "load_average_after" : "load_average_before";
        if (sw.load[i] >= 0)
            cli_set_num(sweep, key, sw.load[i]);
        else
            cli_set_null(sweep, key);
    }
    if (drawn)
        cli_set_str(sweep, "plot", args.plot);
    else
        cli_set_null(sweep, "plot");
    cli_set(sweep, "lines", lines);
    cli_set(doc, "sweep", sweep);
    cli_set(doc, "results", results);
    if (args.roofline)
        roofline_json(doc, roof_drawn);
    return cli_print_doc(doc);
}

/* ---- the sweep as a picture ---- */

/* The date the picture was measured: SOURCE_DATE_EPOCH's (UTC) when it is
 * set, as for reproducible builds, else today's. */
static void measured_on(char *buf, size_t size)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    time_t t = time(NULL);
    uint64_t v = 0;
    struct tm tm;
    if (e && *e && cli_parse_count(e, (uint64_t)INT32_MAX * 4, &v) == 0) {
        t = (time_t)v;
        gmtime_r(&t, &tm);
    } else {
        localtime_r(&t, &tm);
    }
    strftime(buf, size, "%Y-%m-%d", &tm);
}

/* Append ", text" (or text when buf is empty) unless buf holds it already. */
static void append_once(char *buf, size_t size, const char *text)
{
    if (strstr(buf, text))
        return;
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s%s", len ? ", " : "", text);
}

/* A measured line (its run at index from on), its peak as a level. */
static void plot_line(cli_chart *c, const line *l, int colour, int gpus, int *peaks)
{
    char name[200], note[240], v[32];
    const char *dt = gpuprobe_dtype_name(l->dtype);
    if (!l->gpu)
        snprintf(name, sizeof name, "CPU %s", dt);
    else if (gpus > 1)
        snprintf(name, sizeof name, "%s (%s) %s", l->name, l->spec, dt);
    else
        snprintf(name, sizeof name, "%s %s", l->name, dt);
    int s = cli_chart_series(c, name, CLI_LINE_SOLID, colour);
    double peak = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->pts[i].st != GPUPROBE_OK)
            continue;
        const gpuprobe_matmul_result *r = l->pts[i].r;
        double g = dget(r, GPUPROBE_METRIC_GFLOPS), med = dget(r, GPUPROBE_METRIC_MEDIAN_S);
        cli_chart_point(c, s, (double)l->pts[i].n, g);
        /* From the slowest run to the fastest. */
        cli_chart_spread(c, s, g * med / dget(r, GPUPROBE_METRIC_MAX_S), g * med / dget(r, GPUPROBE_METRIC_MIN_S));
        peak = dget(r, GPUPROBE_METRIC_PEAK_GFLOPS);
    }
    if (peak > 0) {
        cli_axis_label(v, sizeof v, peak, "FLOP/s", 1e9);
        snprintf(note, sizeof note, "theoretical peak %s", v); /* on its line, in its colour */
        cli_chart_level(c, peak, colour, note);
        (*peaks)++;
    }
}

/* What ended a line early, or why it is not drawn, for the footer. */
static void plot_stop(char *buf, size_t size, const line *l, int drawn)
{
    char what[200];
    const rec *last = l->n ? &l->pts[l->n - 1] : NULL;
    snprintf(what, sizeof what, "%s %s", l->gpu ? l->name : "CPU", gpuprobe_dtype_name(l->dtype));
    size_t len = strlen(buf);
    if (!drawn)
        snprintf(buf + len, size - len, " Not drawn: %s (%s: %.100s%s).", what,
                 l->stop == STOP_UNSUPPORTED ? "unsupported" : "failed", last ? last->error : "",
                 last && strlen(last->error) > 100 ? "..." : "");
    else if (l->stop == STOP_TIME)
        snprintf(buf + len, size - len, " %s stopped before n = %lld (it would pass the %lld s budget).",
                 what, (long long)l->stop_n, (long long)args.budget_s);
    else if (l->stop == STOP_MEMORY)
        snprintf(buf + len, size - len, " %s stopped at n = %lld (it does not fit in memory).", what,
                 (long long)l->stop_n);
    else if (l->stop == STOP_FAILED)
        snprintf(buf + len, size - len, " %s failed at n = %lld.", what, (long long)l->stop_n);
}

/* How the sweep measured, into buf: the sizes, the runs behind a median,
 * the BLAS (and its threads) or cuBLAS. */
static void sweep_settings(char *buf, size_t size)
{
    char text[2048], backends[512] = "";
    if (args.runs > 0)
        snprintf(text, sizeof text, "exactly %lld timed run%s", (long long)args.runs, args.runs == 1 ? "" : "s");
    else
        snprintf(text, sizeof text, "at least %lld timed runs, more until they add up to %.2g s",
                 (long long)protocol(GPUPROBE_MATMUL_MIN_RUNS),
                 (double)protocol(GPUPROBE_MATMUL_BUDGET_MS) / 1000);
    for (size_t i = 0; i < sw.n; i++)
        for (size_t k = 0; k < sw.lines[i].n; k++)
            if (sw.lines[i].pts[k].r) {
                char b[160];
                const gpuprobe_matmul_result *r = sw.lines[i].pts[k].r;
                const char *name = sget(r, GPUPROBE_METRIC_BACKEND);
                int64_t th = iget(r, GPUPROBE_METRIC_THREADS);
                /* "cuBLAS 13.1.0", without each precision's types */
                int len = (int)strcspn(name, "(");
                while (len > 0 && name[len - 1] == ' ')
                    len--;
                snprintf(b, sizeof b, "%.*s", len, name);
                if (th > 0)
                    snprintf(b + strlen(b), sizeof b - strlen(b), " with %lld thread%s", (long long)th,
                             th == 1 ? "" : "s");
                append_once(backends, sizeof backends, b);
                break;
            }
    int64_t from = INT64_MAX, to = 0;
    for (size_t i = 0; i < sw.n; i++) {
        from = sw.lines[i].from < from ? sw.lines[i].from : from;
        to = sw.lines[i].to > to ? sw.lines[i].to : to;
    }
    snprintf(buf, size, "n doubling from %lld up to %lld; each point is the median of %s, its result "
             "verified against a double-precision reference; %s", (long long)from, (long long)to,
             text, backends);
}

/* The machine's load and every line that ended early or is not drawn,
 * appended to foot. */
static void footer_tail(char *foot, size_t size, const int *drawn)
{
    char load[128];
    load_text(load, sizeof load);
    if (load[0]) {
        size_t len = strlen(foot);
        snprintf(foot + len, size - len, " Machine load: %s (other work lowers the figures)%s.", load,
                 args.roofline ? "" : "; the bars span the slowest to the fastest run");
    }
    for (size_t i = 0; i < sw.n; i++)
        if (!drawn[i] || sw.lines[i].stop != STOP_DONE)
            plot_stop(foot, size, &sw.lines[i], drawn[i]);
}

/* The settings the picture was measured with, and what ended lines early. */
static void plot_footer(cli_chart *c, const int *drawn)
{
    char settings[3072], foot[4096];
    sweep_settings(settings, sizeof settings);
    snprintf(foot, sizeof foot, "%s %s --sweep: %s. Dashed: the theoretical peak of each line, from "
             "clocks and unit counts (not measured).", cli_prog(), gpuprobe_version_string(), settings);
    footer_tail(foot, sizeof foot, drawn);
    cli_chart_footer(c, foot);
}

/* Which lines have a measured point (drawn), in drawn[0 .. sw.n). */
static void drawn_lines(int *drawn)
{
    for (size_t i = 0; i < sw.n; i++)
        for (size_t k = 0; k < sw.lines[i].n; k++)
            drawn[i] |= sw.lines[i].pts[k].st == GPUPROBE_OK;
}

/* The title, and under it the devices drawn and the date. */
static void picture_title(cli_chart *c, const char *title, const int *drawn)
{
    char sub[512] = "", date[32];
    for (size_t i = 0; i < sw.n; i++)
        if (drawn[i])
            append_once(sub, sizeof sub, sw.lines[i].name);
    measured_on(date, sizeof date);
    size_t len = strlen(sub);
    snprintf(sub + len, sizeof sub - len, "%smeasured %s", len ? ", " : "", date);
    cli_chart_title(c, title, sub);
}

/* c written into path (for option opt), then let go with drawn. Returns 0,
 * or 1 after saying why nothing was written. */
static int picture_write(cli_chart *c, const char *opt, const char *path, int *drawn)
{
    char why[512];
    int rc = cli_plot_write(c, path, why, sizeof why);
    if (rc != 0)
        cli_err("%s %s: %s", opt, path, why);
    cli_chart_destroy(c);
    free(drawn);
    return rc != 0;
}

/* --plot: GFLOP/s against n, log-log, a line per device and precision and
 * its peak dashed. Returns 0, or 1 after saying why nothing was written. */
static int sweep_plot(void)
{
    int gpus = 0, peaks = 0, colour = 0;
    int *drawn = calloc(sw.n ? sw.n : 1, sizeof *drawn);
    cli_chart *c = cli_chart_create();
    if (!c || !drawn) {
        free(drawn);
        cli_chart_destroy(c);
        cli_err("--plot %s: out of memory", args.plot);
        return 1;
    }
    drawn_lines(drawn);
    for (size_t i = 0; i < sw.n; i++)
        gpus += sw.lines[i].gpu && (i == 0 || sw.lines[i - 1].device != sw.lines[i].device);
    for (size_t i = 0; i < sw.n; i++)
        if (drawn[i])
            plot_line(c, &sw.lines[i], colour++ % CLI_CHART_COLOURS, gpus, &peaks);
    if (peaks)
        cli_chart_series(c, "dashed: theoretical peak", CLI_LINE_DASHED, CLI_CHART_GREY);
    picture_title(c, "Matrix multiply throughput by size", drawn);
    cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG2,
                   "Matrix size n: n \xc3\x97 n times n \xc3\x97 n (log scale)", NULL, 1);
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "Throughput (FLOP/s, log scale)", "FLOP/s", 1e9);
    plot_footer(c, drawn);
    return picture_write(c, "--plot", args.plot, drawn);
}

/* Reports each failed run on stderr; 1 when one failed. A size that does
 * not fit ends its line and is no failure, nor is a precision a device
 * cannot run, unless no device ran a precision --dtype asked for. */
static int sweep_failures(void)
{
    int failed = 0;
    for (size_t i = 0; i < sw.n; i++) {
        const line *l = &sw.lines[i];
        if (l->stop != STOP_FAILED || l->n == 0)
            continue;
        const rec *x = &l->pts[l->n - 1];
        cli_err("matmul on %s (%s) at n = %lld: %s: %s", l->spec, gpuprobe_dtype_name(l->dtype),
                (long long)x->n, gpuprobe_status_string(x->st), x->error);
        failed = 1;
    }
    for (size_t d = 0; args.dtype_given && d < args.ndtypes; d++) {
        int ran = 0;
        for (size_t i = 0; i < sw.n; i++)
            ran |= sw.lines[i].dtype == args.dtypes[d] && sw.lines[i].n > 0 &&
                   sw.lines[i].pts[0].st == GPUPROBE_OK;
        if (!ran) {
            cli_err("no device here ran %s", gpuprobe_dtype_name(args.dtypes[d]));
            failed = 1;
        }
    }
    return failed;
}

static void sweep_free(void)
{
    for (size_t i = 0; i < sw.n; i++) {
        for (size_t k = 0; k < sw.lines[i].n; k++)
            gpuprobe_matmul_result_destroy(sw.lines[i].pts[k].r);
        free(sw.lines[i].pts);
    }
    free(sw.lines);
    memset(&sw, 0, sizeof sw);
}

/* The pictures, then the table or JSON; the exit status. */
static int sweep_report(void)
{
    int plot_failed = args.plot ? sweep_plot() : 0;
    int roof_failed = args.roofline ? roofline_plot() : 0;
    int failed = sweep_failures() | (args.roofline && roofline_failures());
    int rc = CLI_EXIT_OK;
    if (cli_json()) {
        rc = print_sweep_json(args.plot && !plot_failed, args.roofline && !roof_failed);
    } else {
        print_sweep_text();
        if (args.roofline)
            roofline_text();
    }
    if (!cli_json() && args.plot && !plot_failed) {
        cli_endl();
        cli_line("Drawn into %s: GFLOP/s against n, both on log scales; dashed: theoretical peaks.", args.plot);
    }
    if (!cli_json() && args.roofline && !roof_failed) {
        cli_endl();
        cli_line("Drawn into %s: the roofline, FLOP/s against FLOP/byte, both on log scales; solid: "
                 "measured roofs, dashed: theoretical peaks.", args.roofline);
    }
    return rc != CLI_EXIT_OK ? rc : failed || plot_failed || roof_failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* Every device in every precision asked for (by default fp32 on the CPU
 * and fp32, tf32, fp16 and bf16 on a GPU), then the table or JSON, and
 * the picture. */
static int run_sweep(gpuprobe_context *ctx)
{
    static const gpuprobe_dtype cpu_dt[] = {GPUPROBE_DTYPE_FP32};
    static const gpuprobe_dtype gpu_dt[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_TF32,
                                            GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16};
    const char *detail = "";
    sw.cause = GPUPROBE_CUDA_NOT_BUILT;
    gpuprobe_cuda_status(ctx, &sw.cause, &detail);
    snprintf(sw.detail, sizeof sw.detail, "%s", detail);
    sw.progress = isatty(STDERR_FILENO);
    sw.load[0] = load_average();
    gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_LOGICAL_CORES, &sw.cpus);
    size_t dev[MAX_SWEEP_DEVICES], ndev = 0;
    int rc = sweep_devices(ctx, dev, &ndev);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (args.roofline && ndev > CLI_CHART_MAX_PANELS)
        return cli_usage_error("--roofline draws a panel a device, %d at most: --device lists %zu",
                               CLI_CHART_MAX_PANELS, ndev);
    if (!cli_json()) {
        cli_line("Matrix multiply sweep: n x n x n for n doubling, the median of the timed runs at each n:");
        fflush(stdout);
    }
    for (size_t d = 0; d < ndev && rc == CLI_EXIT_OK; d++) {
        int gpu = is_cuda(ctx, dev[d]);
        const gpuprobe_dtype *dts = args.dtype_given ? args.dtypes : gpu ? gpu_dt : cpu_dt;
        size_t count = args.dtype_given ? args.ndtypes : gpu ? 4 : 1;
        for (size_t i = 0; i < count && rc == CLI_EXIT_OK; i++) {
            line *l = new_line(ctx, dev[d], dts[i]);
            if (l)
                run_line(ctx, l);
            else
                rc = CLI_EXIT_FAIL;
        }
    }
    if (rc == CLI_EXIT_OK && args.roofline)
        roofline_measure(ctx, dev, ndev);
    if (sw.progress)
        fputs("\r\033[K", stderr);
    sw.load[1] = load_average();
    if (rc != CLI_EXIT_OK)
        cli_err("out of memory");
    else
        rc = sweep_report();
    sweep_free();
    roofline_free();
    return rc;
}

static int run(gpuprobe_context *ctx)
{
    if (args.sweep)
        return run_sweep(ctx);
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

/* ---- --bandwidth ---- */

/* One device's bandwidth run, or why it failed. */
typedef struct bw_rec {
    char spec[32];
    gpuprobe_status st;
    char error[512];
    gpuprobe_bandwidth_result *r;
} bw_rec;

static bw_rec bw_recs[MAX_SWEEP_DEVICES];
static size_t bw_nrecs;

static void bw_one(gpuprobe_context *ctx, size_t device, int64_t runs, int64_t threads, uint64_t bytes)
{
    bw_rec *x = &bw_recs[bw_nrecs++];
    const char *spec = "?";
    gpuprobe_device_get_string(ctx, device, GPUPROBE_ATTR_SPEC, &spec);
    snprintf(x->spec, sizeof x->spec, "%s", spec);
    gpuprobe_bandwidth_options *o = NULL;
    x->st = gpuprobe_bandwidth_options_create(&o);
    if (x->st == GPUPROBE_OK) {
        gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, (int64_t)bytes);
        if (runs > 0)
            gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_RUNS, runs);
        gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_CPU_THREADS, threads);
        x->st = gpuprobe_bandwidth_run(ctx, device, o, 0, &x->r);
        gpuprobe_bandwidth_options_destroy(o);
    }
    if (x->st != GPUPROBE_OK)
        snprintf(x->error, sizeof x->error, "%s", gpuprobe_last_error(ctx));
}

static double bw_d(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_metric m)
{
    double v = 0;
    gpuprobe_bandwidth_result_get_double(r, m, &v);
    return v;
}

static int64_t bw_i(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_metric m)
{
    int64_t v = -1;
    gpuprobe_bandwidth_result_get_int(r, m, &v);
    return v;
}

static const char *bw_s(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_metric m)
{
    const char *v = "";
    gpuprobe_bandwidth_result_get_string(r, m, &v);
    return v;
}

/* How each test's bytes are counted, for the text. */
static const char *const bw_counted[] = {"", "read + written", "3 arrays", "pinned", "pageable",
                                         "pinned", "pageable", "8 streams per thread"};
_Static_assert(GPUPROBE_BANDWIDTH_STREAMS == 8, "bw_counted names the streams");

/* Each test the library names, in order (a newer library may name more;
 * a result says which of them ran). */
#define BW_EACH_TEST(t)                                                                          \
    for (int t = 0; strcmp(gpuprobe_bandwidth_test_name((gpuprobe_bandwidth_test)t), "unknown"); \
         t++)

static void bw_print_rec(const bw_rec *x)
{
    const gpuprobe_bandwidth_result *r = x->r;
    int cuda = strncmp(x->spec, "cuda", 4) == 0;
    if (!r) {
        cli_line("%s: failed (%s): %s", x->spec, gpuprobe_status_string(x->st), x->error);
        return;
    }
    char size[32], cache[32];
    gp_format_bytes(size, sizeof size, (uint64_t)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES));
    gp_format_bytes(cache, sizeof cache, (uint64_t)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES));
    cli_put("%s (%s): buffers of %s", x->spec, bw_s(r, GPUPROBE_BANDWIDTH_METRIC_DEVICE_NAME), size);
    if (bw_i(r, GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES) > 0 && bw_i(r, GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES) > 0)
        cli_put(" (%s cache: %s)", cuda ? "L2" : "last-level", cache);
    cli_line(", best (median) of %lld passes:", (long long)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_RUNS));
    BW_EACH_TEST(t) {
        double best = 0, median = 0, frac = 0;
        if (gpuprobe_bandwidth_result_test(r, t, GPUPROBE_BANDWIDTH_BEST_GBPS, &best) != GPUPROBE_OK)
            continue;
        gpuprobe_bandwidth_result_test(r, t, GPUPROBE_BANDWIDTH_MEDIAN_GBPS, &median);
        gpuprobe_bandwidth_result_test(r, t, GPUPROBE_BANDWIDTH_PEAK_FRACTION, &frac);
        cli_put("  %-13s %9.1f GB/s (%.1f)", gpuprobe_bandwidth_test_name(t), best, median);
        if (frac > 0)
            cli_put(", %.0f%% of peak", 100 * frac);
        const char *how = (size_t)t < sizeof bw_counted / sizeof *bw_counted ? bw_counted[t] : "";
        cli_line("%s%s", how[0] ? "; " : "", how);
    }
    double peak = bw_d(r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS);
    if (peak > 0)
        cli_line("  memory peak %.1f GB/s (%s)", peak, bw_s(r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE));
    else
        cli_line("  memory peak: %s", bw_s(r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE));
    if (cuda && bw_i(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_GEN) > 0) {
        int64_t deg = bw_i(r, GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED);
        cli_line("  PCIe link %lldx%lld under load (%.1f GB/s), maximum %lldx%lld (%.1f GB/s)%s",
                 (long long)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN),
                 (long long)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_WIDTH),
                 bw_d(r, GPUPROBE_BANDWIDTH_METRIC_LINK_PEAK_GBPS),
                 (long long)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_GEN),
                 (long long)bw_i(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_WIDTH),
                 bw_d(r, GPUPROBE_BANDWIDTH_METRIC_LINK_MAX_PEAK_GBPS),
                 deg > 0 ? ": DEGRADED, below its maximum" : deg < 0 ? " (degraded: unknown)" : "");
    }
    cli_line("  %s; setup %.3fs", bw_s(r, GPUPROBE_BANDWIDTH_METRIC_METHOD),
             bw_d(r, GPUPROBE_BANDWIDTH_METRIC_SETUP_S));
}

static void bw_set_num_or_null(struct json_object *o, const char *key, double v, int known)
{
    if (known)
        cli_set_num(o, key, v);
    else
        cli_set_null(o, key);
}

static struct json_object *bw_link_json(const gpuprobe_bandwidth_result *r)
{
    struct json_object *o = cli_obj();
    static const struct {
        const char *key;
        gpuprobe_bandwidth_metric m;
    } i[] = {{"gen", GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN}, {"width", GPUPROBE_BANDWIDTH_METRIC_PCIE_WIDTH},
             {"max_gen", GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_GEN},
             {"max_width", GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_WIDTH}};
    for (size_t k = 0; k < sizeof i / sizeof i[0]; k++) {
        int64_t v = bw_i(r, i[k].m);
        if (v < 0)
            cli_set_null(o, i[k].key);
        else
            cli_set_i64(o, i[k].key, v);
    }
    int64_t deg = bw_i(r, GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED);
    if (deg < 0)
        cli_set_null(o, "degraded");
    else
        cli_set_bool(o, "degraded", deg > 0);
    double p = bw_d(r, GPUPROBE_BANDWIDTH_METRIC_LINK_PEAK_GBPS);
    double m = bw_d(r, GPUPROBE_BANDWIDTH_METRIC_LINK_MAX_PEAK_GBPS);
    bw_set_num_or_null(o, "peak_gbps", p, p > 0);
    bw_set_num_or_null(o, "max_peak_gbps", m, m > 0);
    return o;
}

static struct json_object *bw_tests_json(const gpuprobe_bandwidth_result *r)
{
    static const struct {
        const char *key;
        gpuprobe_bandwidth_figure f;
    } f[] = {{"bytes", GPUPROBE_BANDWIDTH_BYTES}, {"best_gbps", GPUPROBE_BANDWIDTH_BEST_GBPS},
             {"median_gbps", GPUPROBE_BANDWIDTH_MEDIAN_GBPS}, {"worst_gbps", GPUPROBE_BANDWIDTH_WORST_GBPS},
             {"best_s", GPUPROBE_BANDWIDTH_BEST_S}, {"median_s", GPUPROBE_BANDWIDTH_MEDIAN_S},
             {"repeats", GPUPROBE_BANDWIDTH_REPEATS}, {"peak_fraction", GPUPROBE_BANDWIDTH_PEAK_FRACTION}};
    struct json_object *tests = cli_arr();
    BW_EACH_TEST(t) {
        double v = 0;
        if (gpuprobe_bandwidth_result_test(r, t, GPUPROBE_BANDWIDTH_BYTES, &v) != GPUPROBE_OK)
            continue;
        struct json_object *o = cli_obj();
        cli_set_str(o, "test", gpuprobe_bandwidth_test_name(t));
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
            gpuprobe_bandwidth_result_test(r, t, f[k].f, &v);
            if (k == 0 || k == 6)
                cli_set_i64(o, f[k].key, (int64_t)v);
            else
                bw_set_num_or_null(o, f[k].key, v, k != 7 || v > 0);
        }
        cli_push(tests, o);
    }
    return tests;
}

static struct json_object *bw_rec_json(const bw_rec *x)
{
    struct json_object *o = cli_obj();
    cli_set_str(o, "device", x->spec);
    if (x->st != GPUPROBE_OK)
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(x->st), x->error));
    else
        cli_set_null(o, "error");
    const gpuprobe_bandwidth_result *r = x->r;
    if (!r)
        return o;
    cli_set_str(o, "device_name", bw_s(r, GPUPROBE_BANDWIDTH_METRIC_DEVICE_NAME));
    static const struct {
        const char *key;
        gpuprobe_bandwidth_metric m;
    } i[] = {{"buffer_bytes", GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES},
             {"target_bytes", GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES},
             {"cache_bytes", GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES},
             {"threads", GPUPROBE_BANDWIDTH_METRIC_THREADS},
             {"pinned_threads", GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS},
             {"runs", GPUPROBE_BANDWIDTH_METRIC_RUNS}};
    for (size_t k = 0; k < sizeof i / sizeof i[0]; k++)
        cli_set_i64(o, i[k].key, bw_i(r, i[k].m));
    double peak = bw_d(r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS);
    bw_set_num_or_null(o, "memory_peak_gbps", peak, peak > 0);
    cli_set_str(o, "peak_source", bw_s(r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE));
    cli_set_str(o, "method", bw_s(r, GPUPROBE_BANDWIDTH_METRIC_METHOD));
    cli_set_num(o, "setup_s", bw_d(r, GPUPROBE_BANDWIDTH_METRIC_SETUP_S));
    if (strncmp(x->spec, "cuda", 4) == 0)
        cli_set(o, "pcie", bw_link_json(r));
    else
        cli_set_null(o, "pcie");
    cli_set(o, "tests", bw_tests_json(r));
    return o;
}

/* --bandwidth: --device's device only, or the CPU then the best GPU. */
static int bw_run(gpuprobe_context *ctx, const char *device, int64_t runs, int64_t threads,
                  uint64_t bytes)
{
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_NOT_BUILT;
    const char *detail = "";
    gpuprobe_cuda_status(ctx, &cause, &detail);
    char reason[640]; /* the detail lives until the next failed call */
    snprintf(reason, sizeof reason, "%s", detail ? detail : "");
    size_t dev = 0;
    if (device) {
        gpuprobe_status st = gpuprobe_select(ctx, device, NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL);
        if (st != GPUPROBE_OK) {
            int rc = cli_fail(ctx, st, "--device %s", device);
            return st == GPUPROBE_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : rc;
        }
        bw_one(ctx, dev, runs, threads, bytes);
    } else {
        bw_one(ctx, 0, runs, threads, bytes);
        if (cause == GPUPROBE_CUDA_AVAILABLE &&
            gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL) == GPUPROBE_OK)
            bw_one(ctx, dev, runs, threads, bytes);
    }
    int failed = 0, rc = CLI_EXIT_OK;
    for (size_t i = 0; i < bw_nrecs; i++)
        if (bw_recs[i].st != GPUPROBE_OK) {
            failed = 1;
            cli_err("bandwidth on %s: %s: %s", bw_recs[i].spec, gpuprobe_status_string(bw_recs[i].st),
                    bw_recs[i].error);
        }
    if (cli_json()) {
        struct json_object *doc = cli_doc();
        cli_cuda_json(doc, cause, reason);
        struct json_object *arr = cli_arr();
        for (size_t i = 0; i < bw_nrecs; i++)
            cli_push(arr, bw_rec_json(&bw_recs[i]));
        cli_set(doc, "bandwidth", arr);
        rc = cli_print_doc(doc);
    } else {
        cli_line("Bandwidth, GB/s = 10^9 bytes/s (docs/bandwidth.md says how bytes are counted):");
        for (size_t i = 0; i < bw_nrecs; i++)
            bw_print_rec(&bw_recs[i]);
        if (!device && cause != GPUPROBE_CUDA_AVAILABLE)
            cli_line("GPU: not available (%s%s%s)", gpuprobe_cuda_cause_string(cause),
                     reason[0] ? ": " : "", reason);
    }
    for (size_t i = 0; i < bw_nrecs; i++)
        gpuprobe_bandwidth_result_destroy(bw_recs[i].r);
    return rc != CLI_EXIT_OK ? rc : failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- --roofline: the sweep's roofs and each device's read rate ---- */

static struct {
    size_t ids[MAX_SWEEP_DEVICES]; /* the devices, in the sweep's order; bw_recs[] beside them */
    size_t n;
    cli_roof_device devs[MAX_SWEEP_DEVICES];
    cli_roof roofs[MAX_SWEEP_DEVICES * MAX_DTYPES];
    cli_roof_point *points;        /* every measured point, roof by roof */
    cli_roofline model;
} rl;

/* The bytes of an element of A and B, and of C: the library's matmul
 * keeps C in fp32 for every GPU precision (fp64 on the CPU's fp64). */
static void elem_bytes(gpuprobe_dtype dt, size_t *in, size_t *out)
{
    *in = dt == GPUPROBE_DTYPE_FP64 ? 8 : dt == GPUPROBE_DTYPE_FP16 || dt == GPUPROBE_DTYPE_BF16 ? 2 : 4;
    *out = dt == GPUPROBE_DTYPE_FP64 ? 8 : 4;
}

/* The roofs of line l: its points, the fastest as the roof. */
static void roofline_roof(cli_roof *r, const line *l, size_t *np)
{
    size_t in = 4, out = 4;
    elem_bytes(l->dtype, &in, &out);
    memset(r, 0, sizeof *r);
    r->dtype = gpuprobe_dtype_name(l->dtype);
    r->points = &rl.points[*np];
    for (size_t k = 0; k < l->n; k++) {
        if (l->pts[k].st != GPUPROBE_OK)
            continue;
        const gpuprobe_matmul_result *m = l->pts[k].r;
        cli_roof_point *p = &rl.points[(*np)++];
        p->n = l->pts[k].n;
        p->bytes = cli_roof_matmul_bytes(p->n, in, out);
        p->gflops = dget(m, GPUPROBE_METRIC_GFLOPS);
        r->npoints++;
        if (p->gflops > r->gflops) {
            r->gflops = p->gflops;
            r->n = p->n;
        }
        r->peak_gflops = dget(m, GPUPROBE_METRIC_PEAK_GFLOPS);
    }
}

/* The model drawn, printed and written: each device's read rate and its
 * lines' roofs. */
static void roofline_model(void)
{
    size_t total = 0, np = 0, nroofs = 0;
    for (size_t i = 0; i < sw.n; i++)
        total += sw.lines[i].n;
    rl.points = calloc(total ? total : 1, sizeof *rl.points);
    if (!rl.points)
        return;
    for (size_t d = 0; d < rl.n; d++) {
        cli_roof_device *dv = &rl.devs[d];
        const bw_rec *b = &bw_recs[d];
        memset(dv, 0, sizeof *dv);
        dv->spec = b->spec;
        dv->name = b->spec;
        if (b->r) {
            gpuprobe_bandwidth_result_test(b->r, GPUPROBE_BANDWIDTH_TEST_READ, GPUPROBE_BANDWIDTH_BEST_GBPS,
                                           &dv->read_gbps);
            dv->peak_gbps = bw_d(b->r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS);
        }
        dv->roofs = &rl.roofs[nroofs];
        for (size_t i = 0; i < sw.n; i++) {
            if (sw.lines[i].device != rl.ids[d])
                continue;
            dv->name = sw.lines[i].name;
            roofline_roof(&rl.roofs[nroofs++], &sw.lines[i], &np);
            dv->nroofs++;
        }
    }
    rl.model = (cli_roofline){rl.devs, rl.n, NULL, 0};
}

/* A bandwidth run on each device of the sweep, then the model. */
static void roofline_measure(gpuprobe_context *ctx, const size_t *dev, size_t ndev)
{
    for (size_t d = 0; d < ndev; d++) {
        const char *spec = "?";
        gpuprobe_device_get_string(ctx, dev[d], GPUPROBE_ATTR_SPEC, &spec);
        if (sw.progress) { /* as progress() does */
            fprintf(stderr, "\r%s: %s memory bandwidth ...\033[K", cli_prog(), spec);
            fflush(stderr);
        }
        rl.ids[rl.n++] = dev[d];
        bw_one(ctx, dev[d], args.runs, args.threads, args.bytes);
    }
    roofline_model();
}

/* How the slopes were measured, and which device has none. */
static void roofline_footer(cli_chart *c, const int *drawn)
{
    char settings[3072], bw[512] = "", nobw[1024] = "", foot[6144];
    sweep_settings(settings, sizeof settings);
    for (size_t d = 0; d < rl.n; d++) {
        const bw_rec *b = &bw_recs[d];
        char one[256], size[32];
        if (b->r) {
            gp_format_bytes(size, sizeof size, (uint64_t)bw_i(b->r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES));
            snprintf(one, sizeof one, "%.31s: best of %lld passes over %s buffers", b->spec,
                     (long long)bw_i(b->r, GPUPROBE_BANDWIDTH_METRIC_RUNS), size);
            append_once(bw, sizeof bw, one);
            if (!(bw_d(b->r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS) > 0)) {
                snprintf(one, sizeof one, " No memory peak for %.31s (%.150s).", b->spec,
                         bw_s(b->r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE));
                snprintf(nobw + strlen(nobw), sizeof nobw - strlen(nobw), "%s", one);
            }
        } else {
            snprintf(one, sizeof one, " No slope for %.31s: its bandwidth run failed (%.100s).", b->spec, b->error);
            snprintf(nobw + strlen(nobw), sizeof nobw - strlen(nobw), "%s", one);
        }
    }
    snprintf(foot, sizeof foot, "%s %s --roofline. Flat roofs: the fastest median of a matmul sweep in "
             "each precision (%s). Slopes: the memory read rate of the bandwidth run (%s; docs/bandwidth.md). "
             "A point is a size n: 2n\xc2\xb3 FLOP over the least memory traffic, A and B read once and C "
             "written once: 12n\xc2\xb2 bytes in fp32 and tf32, 8n\xc2\xb2 in fp16 and bf16 (C is fp32), "
             "24n\xc2\xb2 in fp64. Dashed: theoretical peaks, compute from clocks and unit counts, memory from the "
             "platform (not measured).%s", cli_prog(), gpuprobe_version_string(), settings,
             bw[0] ? bw : "none measured", nobw);
    footer_tail(foot, sizeof foot, drawn);
    cli_chart_footer(c, foot);
}

/* --roofline: the picture. Returns 0, or 1 after saying why nothing was
 * written. */
static int roofline_plot(void)
{
    int *drawn = calloc(sw.n ? sw.n : 1, sizeof *drawn);
    cli_chart *c = drawn && rl.points ? cli_chart_create() : NULL;
    if (!c) {
        free(drawn);
        cli_err("--roofline %s: out of memory", args.roofline);
        return 1;
    }
    drawn_lines(drawn);
    picture_title(c, "Roofline: attainable throughput by arithmetic intensity", drawn);
    cli_roofline_draw(c, &rl.model);
    roofline_footer(c, drawn);
    return picture_write(c, "--roofline", args.roofline, drawn);
}

static void roofline_text(void)
{
    cli_endl();
    cli_line("Bandwidth, GB/s = 10^9 bytes/s (docs/bandwidth.md says how bytes are counted):");
    for (size_t d = 0; d < rl.n; d++)
        bw_print_rec(&bw_recs[d]);
    cli_endl();
    cli_line("Roofline: attainable = min(roof, memory read x FLOP/byte); a point's FLOP/byte is 2 n^3 over");
    cli_line("A and B read once and C written once (12 n^2 bytes in fp32, tf32; 8 n^2 in fp16, bf16; 24 n^2 in fp64):");
    if (rl.points)
        cli_roofline_print(&rl.model);
}

static void roofline_json(struct json_object *doc, int drawn)
{
    struct json_object *arr = cli_arr(), *o = cli_obj();
    for (size_t d = 0; d < rl.n; d++)
        cli_push(arr, bw_rec_json(&bw_recs[d]));
    cli_set(doc, "bandwidth", arr);
    if (drawn)
        cli_set_str(o, "plot", args.roofline);
    else
        cli_set_null(o, "plot");
    cli_set(o, "devices", rl.points ? cli_roofline_json(&rl.model) : cli_arr());
    cli_set(doc, "roofline", o);
}

/* Reports each failed bandwidth run on stderr; 1 when one failed. */
static int roofline_failures(void)
{
    int failed = 0;
    for (size_t d = 0; d < rl.n; d++)
        if (bw_recs[d].st != GPUPROBE_OK) {
            cli_err("bandwidth on %s: %s: %s", bw_recs[d].spec, gpuprobe_status_string(bw_recs[d].st),
                    bw_recs[d].error);
            failed = 1;
        }
    return failed;
}

static void roofline_free(void)
{
    for (size_t d = 0; d < rl.n; d++)
        gpuprobe_bandwidth_result_destroy(bw_recs[d].r);
    free(rl.points);
    memset(&rl, 0, sizeof rl);
    memset(bw_recs, 0, sizeof bw_recs);
    bw_nrecs = 0;
}

static int check(void)
{
    if (args.bandwidth && args.roofline)
        return cli_usage_error("--roofline runs the bandwidth test itself: not with --bandwidth "
                               "(--bytes sets its buffers)");
    if (args.bandwidth && (args.size_given || args.dtype_given || args.batch_given))
        return cli_usage_error("--size, --dtype and --batch are a matmul's: not with --bandwidth");
    if (args.bandwidth && (args.sweep || args.plot || budget_given))
        return cli_usage_error("--sweep, --budget and --plot are a matmul's: not with --bandwidth");
    if (!args.bandwidth && !args.roofline && args.bytes)
        return cli_usage_error("--bytes is for --bandwidth and --roofline");
    if (args.roofline) { /* a sweep, with a shorter budget by default */
        args.sweep = 1;
        if (!budget_given)
            args.budget_s = 20;
    }
    return args.bandwidth ? CLI_EXIT_OK : matmul_check();
}

static int run_command(gpuprobe_context *ctx)
{
    return args.bandwidth ? bw_run(ctx, args.device, args.runs, args.threads, args.bytes) : run(ctx);
}

static const cli_command command = {
    "gpuprobe-bench",
    "Time an N x N matrix multiplication on the CPU and the best GPU (the\n"
    "lesson's benchmark): warm-up, median of timed runs, results verified.\n"
    "With --bandwidth, measure memory and host-link bandwidth instead.",
    options,
    "a run failed or its result did not verify, or --device names no usable device",
    "See gpuprobe-bench(1).",
    option,
    check,
    run_command,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
