/*
 * bandwidth.c - the bandwidth measurement: options, results and the
 * protocol, which this file owns whole; the backends (cpu_bandwidth.c,
 * cuda_bandwidth.c) only allocate, run one test's pass and check the data,
 * through their table of operations (bandwidth_internal.h;
 * docs/architecture.md).
 *
 * The protocol:
 *   1. open the backend: what the device has (caches, room, the peak);
 *   2. the buffer size: the one asked, checked against the host's limits
 *      (and the device's room), or the size rule's (4 x the CPU's
 *      last-level caches, at least 64 MiB; max(1 GiB, 8 x L2) on a GPU)
 *      made smaller only when memory is short;
 *   3. setup, timed apart: allocation and first touch (prepare), then the
 *      warm-up passes, the tests taking turns; a test whose warm-up pass
 *      lasted under GP_BW_PASS_S is repeated back to back in each timed
 *      pass, so that a short pass is not timed at the mercy of a clock
 *      read or a launch;
 *   4. RUNS timed passes of each test, taking turns (read, copy, triad,
 *      transfers), so that a slow moment of the machine hits them alike;
 *   5. the backend checks the data; statistics per test: the best pass
 *      (STREAM's figure), the median and the worst.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bandwidth_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ---------------------------------------------------------------- */

#define GP_BW_NPARAMS 6

struct gpuprobe_bandwidth_options {
    gp_params p;
};

static const gp_param_info bw_info[GP_BW_NPARAMS] = {
    [GPUPROBE_BANDWIDTH_BUFFER_BYTES] = {0, (int64_t)1 << 40, 0},
    [GPUPROBE_BANDWIDTH_RUNS] = {1, GP_BW_MAX_RUNS, 10},
    [GPUPROBE_BANDWIDTH_WARMUP] = {0, 100, 1},
    [GPUPROBE_BANDWIDTH_TESTS] = {0, (1 << GP_BW_NTESTS) - 1, 0},
    [GPUPROBE_BANDWIDTH_CPU_THREADS] = {0, 1024, 0},
    [GPUPROBE_BANDWIDTH_PIN_THREADS] = {0, 1, 1},
};
_Static_assert(GP_BW_NPARAMS <= GP_PARAMS_MAX, "bandwidth options fit a gp_params");
static const gp_param_table bw_table = {bw_info, GP_BW_NPARAMS, 0};

gpuprobe_status gpuprobe_bandwidth_options_create(gpuprobe_bandwidth_options **out)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = gp_params_new(sizeof **out, &bw_table);
    return *out ? GPUPROBE_OK : GPUPROBE_ERR_OUT_OF_MEMORY;
}

void gpuprobe_bandwidth_options_destroy(gpuprobe_bandwidth_options *opts)
{
    gp_params_destroy(opts);
}

gpuprobe_status gpuprobe_bandwidth_param_bounds(gpuprobe_bandwidth_param param,
                                                int64_t *lower, int64_t *upper)
{
    return gp_params_bounds(&bw_table, (int)param, lower, upper);
}

gpuprobe_status gpuprobe_bandwidth_options_set(gpuprobe_bandwidth_options *opts,
                                               gpuprobe_bandwidth_param param, int64_t value)
{
    return gp_params_set(opts ? &opts->p : NULL, (int)param, value);
}

gpuprobe_status gpuprobe_bandwidth_options_get(const gpuprobe_bandwidth_options *opts,
                                               gpuprobe_bandwidth_param param, int64_t *value)
{
    return gp_params_get(opts ? &opts->p : NULL, (int)param, value);
}

/* ---- results ------------------------------------------------------------------ */

#define GP_BW_NFIGURES 8

struct gpuprobe_bandwidth_result {
    unsigned measured;                       /* GP_BW_BIT of each test */
    double fig[GP_BW_NTESTS][GP_BW_NFIGURES];
    int64_t device, buffer_bytes, target_bytes, cache_bytes, threads, pinned, runs;
    int64_t pcie_gen, pcie_width, pcie_max_gen, pcie_max_width, degraded;
    double memory_peak, link_peak, link_max_peak, setup_s;
    char device_name[GP_NAME_LEN];
    char method[512];
    char peak_source[192];
};

void gpuprobe_bandwidth_result_destroy(gpuprobe_bandwidth_result *result)
{
    free(result);
}

gpuprobe_status gpuprobe_bandwidth_result_test(const gpuprobe_bandwidth_result *result,
                                               gpuprobe_bandwidth_test test,
                                               gpuprobe_bandwidth_figure figure, double *value)
{
    if (!result || !value || !gp_bandwidth_test_known(test) ||
        (unsigned)figure >= GP_BW_NFIGURES)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!(result->measured & GP_BW_BIT(test)))
        return GPUPROBE_ERR_UNSUPPORTED;
    *value = result->fig[test][figure];
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_bandwidth_result_get_int(const gpuprobe_bandwidth_result *result,
                                                  gpuprobe_bandwidth_metric metric,
                                                  int64_t *value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_BANDWIDTH_METRIC_DEVICE: *value = result->device; break;
    case GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES: *value = result->buffer_bytes; break;
    case GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES: *value = result->target_bytes; break;
    case GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES: *value = result->cache_bytes; break;
    case GPUPROBE_BANDWIDTH_METRIC_THREADS: *value = result->threads; break;
    case GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS: *value = result->pinned; break;
    case GPUPROBE_BANDWIDTH_METRIC_RUNS: *value = result->runs; break;
    case GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN: *value = result->pcie_gen; break;
    case GPUPROBE_BANDWIDTH_METRIC_PCIE_WIDTH: *value = result->pcie_width; break;
    case GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_GEN: *value = result->pcie_max_gen; break;
    case GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_WIDTH: *value = result->pcie_max_width; break;
    case GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED: *value = result->degraded; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_bandwidth_result_get_double(const gpuprobe_bandwidth_result *result,
                                                     gpuprobe_bandwidth_metric metric,
                                                     double *value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS: *value = result->memory_peak; break;
    case GPUPROBE_BANDWIDTH_METRIC_LINK_PEAK_GBPS: *value = result->link_peak; break;
    case GPUPROBE_BANDWIDTH_METRIC_LINK_MAX_PEAK_GBPS: *value = result->link_max_peak; break;
    case GPUPROBE_BANDWIDTH_METRIC_SETUP_S: *value = result->setup_s; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_bandwidth_result_get_string(const gpuprobe_bandwidth_result *result,
                                                     gpuprobe_bandwidth_metric metric,
                                                     const char **value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_BANDWIDTH_METRIC_DEVICE_NAME: *value = result->device_name; break;
    case GPUPROBE_BANDWIDTH_METRIC_METHOD: *value = result->method; break;
    case GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE: *value = result->peak_source; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

/* ---- the run ------------------------------------------------------------------- */

/* The run's state between the protocol's steps. */
typedef struct bw_run {
    gp_bw_job job;
    const gp_bw_backend *be;
    void *state;
    double *times;             /* [GP_BW_NTESTS][runs]: seconds per repetition */
    size_t reps[GP_BW_NTESTS];
    double setup_s;
} bw_run;

static int is_cuda(const gp_bw_job *job)
{
    return job->dev->kind != GPUPROBE_DEVICE_CPU;
}

/* The host's room for buffers of any kind: the tightest limit. */
static uint64_t host_room(const gp_host_memory *hm)
{
    gp_room mem, space;
    gp_host_room(hm, 0, &mem);
    gp_host_room(hm, 1, &space);
    return mem.bytes < space.bytes ? mem.bytes : space.bytes;
}

/* An explicit size: every buffer must fit, or the run is refused. */
static gpuprobe_status check_given(gpuprobe_context *ctx, gp_bw_job *job,
                                   const gp_host_memory *hm, int have_hm)
{
    job->buffer_bytes = job->asked_bytes / 64 * 64;
    uint64_t host = (uint64_t)job->host_buffers * job->buffer_bytes;
    uint64_t dev = (uint64_t)job->device_buffers * job->buffer_bytes;
    if (job->device_buffers && dev > job->device_room)
        return gp_fail(ctx, GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY,
                       "bandwidth on %s: %d buffers of %llu bytes need %llu bytes of device "
                       "memory, but %llu are free for them", job->dev->spec,
                       job->device_buffers, (unsigned long long)job->buffer_bytes,
                       (unsigned long long)dev, (unsigned long long)job->device_room);
    if (!have_hm)
        return GPUPROBE_OK;
    char what[64], detail[96];
    gp_snprintf(what, sizeof what, "bandwidth on %s", job->dev->spec);
    gp_snprintf(detail, sizeof detail, "%d buffers of %llu bytes", job->host_buffers,
                (unsigned long long)job->buffer_bytes);
    return gp_host_fits(ctx, hm, host, detail, host + job->extra_space + 4096u * 3, detail, what);
}

/* The size rule's buffers, smaller only where memory is short: host
 * buffers take at most half the host's room. */
static gpuprobe_status choose_size(gpuprobe_context *ctx, gp_bw_job *job,
                                   const gp_host_memory *hm, int have_hm)
{
    job->target_bytes = gp_bw_target_bytes(is_cuda(job), job->cache_bytes);
    uint64_t limit = UINT64_MAX;
    if (have_hm && job->host_buffers) {
        uint64_t room = host_room(hm), extra = job->extra_space;
        room = room > extra ? room - extra : 0;
        limit = room / 2 / (uint64_t)job->host_buffers;
    }
    if (job->device_buffers && job->device_room / (uint64_t)job->device_buffers < limit)
        limit = job->device_room / (uint64_t)job->device_buffers;
    job->buffer_bytes = gp_bw_fit_bytes(job->target_bytes, limit);
    if (job->buffer_bytes < GP_BW_MIN_BYTES)
        return gp_fail(ctx, job->device_buffers && job->device_room < GP_BW_MIN_BYTES * 2
                                ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY : GPUPROBE_ERR_OUT_OF_MEMORY,
                       "bandwidth on %s: no room for %d buffers of %llu bytes (the least a "
                       "run takes): %llu bytes per buffer at most", job->dev->spec,
                       job->host_buffers + job->device_buffers,
                       (unsigned long long)GP_BW_MIN_BYTES, (unsigned long long)limit);
    return GPUPROBE_OK;
}

static gpuprobe_status size_buffers(gpuprobe_context *ctx, gp_bw_job *job)
{
    gp_host_memory hm;
    gpuprobe_status st = gp_host_memory_read(ctx, ctx->sysroot, &hm);
    if (st == GPUPROBE_ERR_OUT_OF_MEMORY)
        return st;
    int have_hm = st == GPUPROBE_OK;
    if (!have_hm)
        ctx->error[0] = '\0'; /* unknown: go ahead; a failed allocation is still reported */
    if (job->asked_bytes)
        return check_given(ctx, job, &hm, have_hm);
    return choose_size(ctx, job, &hm, have_hm);
}

/* One round of passes, each test in turn, each run->reps[t] times; the
 * time of each pass per repetition into v[t * stride]. */
static gpuprobe_status round_of(gpuprobe_context *ctx, bw_run *run, double *v, size_t stride)
{
    for (int t = 0; t < GP_BW_NTESTS; t++) {
        if (!(run->job.tests & GP_BW_BIT(t)))
            continue;
        double s = 0.0;
        gpuprobe_status st = run->be->pass(ctx, run->state, (gpuprobe_bandwidth_test)t,
                                           run->reps[t], &s);
        if (st != GPUPROBE_OK)
            return st;
        v[(size_t)t * stride] = s / (double)run->reps[t];
    }
    return GPUPROBE_OK;
}

/* Repetitions per timed pass: 1, or as many as make a pass last
 * GP_BW_PASS_S when the last warm-up pass (warm[t], one repetition) was
 * shorter. */
static void choose_reps(bw_run *run, const double *warm)
{
    for (int t = 0; t < GP_BW_NTESTS; t++) {
        run->reps[t] = run->job.warmup > 0 ? gp_bw_reps_for(warm[t]) : 1;
    }
}

/* Steps 3-5, between open() and release(). */
static gpuprobe_status passes(gpuprobe_context *ctx, bw_run *run)
{
    double t0 = gp_now(), warm[GP_BW_NTESTS] = {0};
    gpuprobe_status st = run->be->prepare(ctx, run->state, &run->job);
    for (int t = 0; t < GP_BW_NTESTS; t++)
        run->reps[t] = 1;
    for (int64_t w = 0; st == GPUPROBE_OK && w < run->job.warmup; w++)
        st = round_of(ctx, run, warm, 1);
    choose_reps(run, warm);
    run->setup_s = gp_now() - t0;
    size_t n = (size_t)run->job.runs;
    for (size_t r = 0; st == GPUPROBE_OK && r < n; r++)
        st = round_of(ctx, run, run->times + r, n);
    if (st == GPUPROBE_OK)
        st = run->be->finish(ctx, run->state, &run->job);
    return st;
}

static void fill_test(gpuprobe_bandwidth_result *res, const bw_run *run, int t, double peak)
{
    size_t n = (size_t)run->job.runs;
    double *v = run->times + (size_t)t * n;
    double bytes = gp_bw_pass_bytes(t, run->job.buffer_bytes, run->be->read_buffers);
    double *f = res->fig[t];
    double best = gp_stats_min(v, n), worst = gp_stats_max(v, n);
    double median = gp_stats_median_inplace(v, n);
    f[GPUPROBE_BANDWIDTH_BEST_S] = best;
    f[GPUPROBE_BANDWIDTH_MEDIAN_S] = median;
    f[GPUPROBE_BANDWIDTH_BYTES] = bytes;
    f[GPUPROBE_BANDWIDTH_BEST_GBPS] = best > 0 ? bytes / best / 1e9 : 0.0;
    f[GPUPROBE_BANDWIDTH_MEDIAN_GBPS] = median > 0 ? bytes / median / 1e9 : 0.0;
    f[GPUPROBE_BANDWIDTH_WORST_GBPS] = worst > 0 ? bytes / worst / 1e9 : 0.0;
    f[GPUPROBE_BANDWIDTH_PEAK_FRACTION] = peak > 0 ? f[GPUPROBE_BANDWIDTH_BEST_GBPS] / peak : 0.0;
    f[GPUPROBE_BANDWIDTH_REPEATS] = (double)run->reps[t];
    res->measured |= GP_BW_BIT(t);
}

static void fill_link(gpuprobe_bandwidth_result *r, const gp_bw_job *job)
{
    r->pcie_gen = job->pcie_gen;
    r->pcie_width = job->pcie_width;
    r->pcie_max_gen = job->pcie_max_gen;
    r->pcie_max_width = job->pcie_max_width;
    r->link_peak = gp_bw_pcie_gbps(job->pcie_gen, job->pcie_width);
    r->link_max_peak = gp_bw_pcie_gbps(job->pcie_max_gen, job->pcie_max_width);
    if (job->pcie_gen < 0 || job->pcie_width < 0 || job->pcie_max_gen < 0 ||
        job->pcie_max_width < 0)
        r->degraded = -1;
    else
        r->degraded = job->pcie_gen < job->pcie_max_gen || job->pcie_width < job->pcie_max_width;
}

static void fill_result(gpuprobe_bandwidth_result *r, const bw_run *run)
{
    const gp_bw_job *job = &run->job;
    fill_link(r, job);
    for (int t = 0; t < GP_BW_NTESTS; t++) {
        int link = t >= GPUPROBE_BANDWIDTH_TEST_H2D_PINNED;
        if (job->tests & GP_BW_BIT(t))
            fill_test(r, run, t, link ? r->link_peak : job->memory_peak_gbps);
    }
    r->device = (int64_t)job->device_index;
    r->buffer_bytes = (int64_t)job->buffer_bytes;
    r->target_bytes = (int64_t)job->target_bytes;
    r->cache_bytes = (int64_t)job->cache_bytes;
    r->threads = job->threads;
    r->pinned = job->pinned;
    r->runs = job->runs;
    r->memory_peak = job->memory_peak_gbps;
    r->setup_s = run->setup_s;
    gp_strlcpy(r->device_name, job->dev->name, sizeof r->device_name);
    gp_strlcpy(r->method, job->method, sizeof r->method);
    gp_strlcpy(r->peak_source, job->peak_source, sizeof r->peak_source);
}

/* The job from the options (the defaults when NULL), checked against the
 * device's backend. */
static gpuprobe_status job_from(gpuprobe_context *ctx, const gpuprobe_bandwidth_options *opts,
                                bw_run *run)
{
    gpuprobe_bandwidth_options defaults;
    if (!opts) {
        gp_params_init(&defaults.p, &bw_table);
        opts = &defaults;
    }
    gp_bw_job *job = &run->job;
    job->asked_bytes = (uint64_t)opts->p.v[GPUPROBE_BANDWIDTH_BUFFER_BYTES];
    job->runs = opts->p.v[GPUPROBE_BANDWIDTH_RUNS];
    job->warmup = opts->p.v[GPUPROBE_BANDWIDTH_WARMUP];
    job->cpu_threads = opts->p.v[GPUPROBE_BANDWIDTH_CPU_THREADS];
    job->pin = (int)opts->p.v[GPUPROBE_BANDWIDTH_PIN_THREADS];
    job->tests = (unsigned)opts->p.v[GPUPROBE_BANDWIDTH_TESTS];
    job->pcie_gen = job->pcie_width = job->pcie_max_gen = job->pcie_max_width = -1;
    run->be = is_cuda(job) ? &gp_cuda_bw_backend : &gp_cpu_bw_backend;
    if (job->tests == 0)
        job->tests = run->be->tests;
    if (job->asked_bytes && job->asked_bytes < GP_BW_MIN_BYTES)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "bandwidth: buffers of %llu bytes are too small (0 for automatic, "
                       "or at least %llu)", (unsigned long long)job->asked_bytes,
                       (unsigned long long)GP_BW_MIN_BYTES);
    unsigned missing = job->tests & ~run->be->tests;
    if (missing) {
        int t = __builtin_ctz(missing);
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED, "bandwidth test %s is not measured on %s "
                       "(%s)", gpuprobe_bandwidth_test_name((gpuprobe_bandwidth_test)t),
                       job->dev->spec, is_cuda(job) ? "the CPU has it" : "CUDA devices have it");
    }
    return GPUPROBE_OK;
}

/* Open, size, the passes, release on every path. */
static gpuprobe_status run_on(gpuprobe_context *ctx, bw_run *run)
{
    gpuprobe_status st = run->be->open(ctx, &run->job, &run->state);
    if (st != GPUPROBE_OK)
        return st;
    st = size_buffers(ctx, &run->job);
    if (st == GPUPROBE_OK) {
        run->times = calloc((size_t)GP_BW_NTESTS * (size_t)run->job.runs, sizeof *run->times);
        if (!run->times)
            st = gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the pass times");
    }
    if (st == GPUPROBE_OK)
        st = passes(ctx, run);
    return run->be->release(ctx, run->state, st);
}

/* The run itself, the arguments checked: *out set on OK, NULL otherwise. */
static gpuprobe_status run_job(gpuprobe_context *ctx, size_t device,
                               const gpuprobe_bandwidth_options *opts,
                               gpuprobe_bandwidth_result **out)
{
    bw_run *run = calloc(1, sizeof *run);
    if (!run)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the bandwidth run");
    run->job.device_index = device;
    gpuprobe_status st = gp_get_device(ctx, device, &run->job.dev);
    if (st == GPUPROBE_OK)
        st = job_from(ctx, opts, run);
    if (st == GPUPROBE_OK)
        st = run_on(ctx, run);
    gpuprobe_bandwidth_result *r = NULL;
    if (st == GPUPROBE_OK && !(r = calloc(1, sizeof *r)))
        st = gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the bandwidth result");
    if (st == GPUPROBE_OK)
        fill_result(r, run);
    free(run->times);
    free(run);
    *out = r;
    return st;
}

gpuprobe_status gpuprobe_bandwidth_run(gpuprobe_context *ctx, size_t device,
                                       const gpuprobe_bandwidth_options *opts, unsigned flags,
                                       gpuprobe_bandwidth_result **out)
{
    if (out)
        *out = NULL;
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "gpuprobe_bandwidth_run: out is NULL");
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_bandwidth_run: flags must be 0 (got 0x%x)", flags);
    gpuprobe_status st = run_job(ctx, device, opts, out);
    return st == GPUPROBE_OK ? gp_ok(ctx) : st;
}

gpuprobe_status gp_bandwidth_read(gpuprobe_context *ctx, size_t device,
                                  gpuprobe_bandwidth_test test, uint64_t buffer_bytes,
                                  int64_t cpu_threads, double *bytes_per_s, int *threads_used)
{
    gpuprobe_bandwidth_options o;
    gp_params_init(&o.p, &bw_table);
    o.p.v[GPUPROBE_BANDWIDTH_TESTS] = GP_BW_BIT(test);
    /* STREAM's count: a short dip of a shared machine moves the median little. */
    o.p.v[GPUPROBE_BANDWIDTH_RUNS] = 10;
    o.p.v[GPUPROBE_BANDWIDTH_BUFFER_BYTES] = (int64_t)buffer_bytes;
    o.p.v[GPUPROBE_BANDWIDTH_CPU_THREADS] = cpu_threads;
    gpuprobe_bandwidth_result *r = NULL;
    gpuprobe_status st = run_job(ctx, device, &o, &r);
    if (st == GPUPROBE_OK) {
        *bytes_per_s = r->fig[test][GPUPROBE_BANDWIDTH_MEDIAN_GBPS] * 1e9;
        *threads_used = r->threads;
    }
    gpuprobe_bandwidth_result_destroy(r);
    return st;
}
