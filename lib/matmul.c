/*
 * matmul.c - the timed matmul: options, results and the protocol, which
 * this file owns whole; the backends (cpu_matmul.c, cuda_matmul.c) only
 * move data and run the gemm, through their table of operations
 * (matmul_backend.h; docs/architecture.md).
 *
 * The protocol (docs/matmul.md says why):
 *   1. setup, timed apart: the backend's libraries and buffers, seeded
 *      zero-mean inputs, C poisoned with NaN (host and device), handles and
 *      streams, the warm-up calls (which absorb first-call kernel loading),
 *      the block size's calibration and the search for the steady state
 *      (warm-up blocks, in windows of GP_MM_WINDOW_S at least, until the
 *      medians of two windows in a row agree within GP_MM_STEADY_TOL, at
 *      most WARMUP_MS of warm-up in all), after which an automatic
 *      batch is grown if the steady calls are faster than the first;
 *   2. host-to-device copies (CUDA), timed apart with events;
 *   3. timed samples, each a block of BATCH gemm calls back to back timed
 *      as one (the CPU's monotonic clock, CUDA events on the library's own
 *      stream) and divided by BATCH: at least MIN_RUNS samples, more until
 *      their timed total reaches BUDGET_MS (or MAX_RUNS when set). BATCH
 *      (0, the default) is chosen so that a sample lasts GP_MM_SAMPLE_S at
 *      least: one call when a call is that long, else as many as it takes
 *      (timeit.autorange and torch.utils.benchmark's blocked autorange do
 *      the same), so that a sub-millisecond gemm is not timed at the mercy
 *      of a thread's wake-up;
 *   4. device-to-host copy of C (CUDA), timed apart;
 *   5. verification of sampled entries against a host reference;
 *   6. statistics of the samples (median, min, max, mean, spread).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "matmul_backend.h"
#include "cpu_bf16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void (*gp_test_matmul_corrupt)(void *c, gp_elem ec, int64_t m, int64_t n);
const gp_mm_backend *gp_test_matmul_backend;

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

#define GP_MM_NPARAMS 15

/* A gp_params (params.c), first: gp_params_new() makes one. */
struct gpuprobe_matmul_options {
    gp_params p;
};

static const gp_param_info mm_info[GP_MM_NPARAMS] = {
    /* M, N, K: cblas and cuBLAS take int dimensions and leading dimensions. */
    [GPUPROBE_MATMUL_M] = {1, INT32_MAX, 5000},
    [GPUPROBE_MATMUL_N] = {1, INT32_MAX, 5000},
    [GPUPROBE_MATMUL_K] = {1, INT32_MAX, 5000},
    /* fp32, fp64, tf32, fp16, bf16; fp8/int8/int4 are capacity-only. */
    [GPUPROBE_MATMUL_DTYPE] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_BF16,
                               GPUPROBE_DTYPE_FP32},
    [GPUPROBE_MATMUL_WARMUP] = {0, 1000, 1},
    [GPUPROBE_MATMUL_MIN_RUNS] = {1, 10000, 5},
    [GPUPROBE_MATMUL_MAX_RUNS] = {0, 10000, 0},
    [GPUPROBE_MATMUL_BUDGET_MS] = {0, 3600000, 250},
    [GPUPROBE_MATMUL_TRANSFERS] = {0, 1, 1},
    [GPUPROBE_MATMUL_VERIFY] = {0, 1, 1},
    [GPUPROBE_MATMUL_SEED] = {0, INT64_MAX, 42},
    [GPUPROBE_MATMUL_CPU_THREADS] = {0, 1024, 0},
    [GPUPROBE_MATMUL_VERIFY_SAMPLES] = {1, 1 << 20, 256},
    [GPUPROBE_MATMUL_BATCH] = {0, 1 << 20, 0},
    [GPUPROBE_MATMUL_WARMUP_MS] = {0, 3600000, 1000},
};
_Static_assert(GP_MM_NPARAMS <= GP_PARAMS_MAX, "matmul options fit a gp_params");
static const gp_param_table mm_table = {mm_info, GP_MM_NPARAMS, 0};

gpuprobe_status gpuprobe_matmul_options_create(gpuprobe_matmul_options **out)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = gp_params_new(sizeof **out, &mm_table);
    return *out ? GPUPROBE_OK : GPUPROBE_ERR_OUT_OF_MEMORY;
}

void gpuprobe_matmul_options_destroy(gpuprobe_matmul_options *opts)
{
    gp_params_destroy(opts);
}

gpuprobe_status gpuprobe_matmul_param_bounds(gpuprobe_matmul_param param,
                                             int64_t *lower, int64_t *upper)
{
    return gp_params_bounds(&mm_table, (int)param, lower, upper);
}

gpuprobe_status gpuprobe_matmul_options_set(gpuprobe_matmul_options *opts,
                                            gpuprobe_matmul_param param,
                                            int64_t value)
{
    return gp_params_set(opts ? &opts->p : NULL, (int)param, value);
}

/* N and K are M's until they are set. */
static int64_t opt(const gp_params *ps, gpuprobe_matmul_param p)
{
    if ((p == GPUPROBE_MATMUL_N || p == GPUPROBE_MATMUL_K) && !gp_params_is_set(ps, (int)p))
        p = GPUPROBE_MATMUL_M;
    return ps->v[p];
}

gpuprobe_status gpuprobe_matmul_options_get(const gpuprobe_matmul_options *opts,
                                            gpuprobe_matmul_param param,
                                            int64_t *value)
{
    gpuprobe_status st = gp_params_get(opts ? &opts->p : NULL, (int)param, value);
    if (st == GPUPROBE_OK)
        *value = opt(&opts->p, param);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

#define GP_MM_NDOUBLE 13 /* metrics 0..12 are doubles */

struct gpuprobe_matmul_result {
    double d[GP_MM_NDOUBLE];
    double warmup_s, iqr_s;
    int64_t verified, runs, batch, threads, m, n, k, dtype, device;
    int64_t warmup_runs, steady;
    char device_name[GP_NAME_LEN];
    char backend[128];
    char math_mode[96];
    char compute_type[64];
};

void gpuprobe_matmul_result_destroy(gpuprobe_matmul_result *result)
{
    free(result);
}

gpuprobe_status
gpuprobe_matmul_result_get_double(const gpuprobe_matmul_result *result,
                                  gpuprobe_matmul_metric metric, double *value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_METRIC_WARMUP_S: *value = result->warmup_s; break;
    case GPUPROBE_METRIC_IQR_S: *value = result->iqr_s; break;
    default:
        if ((unsigned)metric >= GP_MM_NDOUBLE)
            return GPUPROBE_ERR_INVALID_ARGUMENT;
        *value = result->d[metric];
    }
    return GPUPROBE_OK;
}

gpuprobe_status
gpuprobe_matmul_result_get_int(const gpuprobe_matmul_result *result,
                               gpuprobe_matmul_metric metric, int64_t *value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_METRIC_VERIFIED: *value = result->verified; break;
    case GPUPROBE_METRIC_RUNS: *value = result->runs; break;
    case GPUPROBE_METRIC_THREADS: *value = result->threads; break;
    case GPUPROBE_METRIC_M: *value = result->m; break;
    case GPUPROBE_METRIC_N: *value = result->n; break;
    case GPUPROBE_METRIC_K: *value = result->k; break;
    case GPUPROBE_METRIC_DTYPE: *value = result->dtype; break;
    case GPUPROBE_METRIC_DEVICE: *value = result->device; break;
    case GPUPROBE_METRIC_BATCH: *value = result->batch; break;
    case GPUPROBE_METRIC_WARMUP_RUNS: *value = result->warmup_runs; break;
    case GPUPROBE_METRIC_STEADY: *value = result->steady; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

gpuprobe_status
gpuprobe_matmul_result_get_string(const gpuprobe_matmul_result *result,
                                  gpuprobe_matmul_metric metric,
                                  const char **value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_METRIC_DEVICE_NAME: *value = result->device_name; break;
    case GPUPROBE_METRIC_BACKEND: *value = result->backend; break;
    case GPUPROBE_METRIC_MATH_MODE: *value = result->math_mode; break;
    case GPUPROBE_METRIC_COMPUTE_TYPE: *value = result->compute_type; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

/* ------------------------------------------------------------------------ */
/* Verification                                                             */
/* ------------------------------------------------------------------------ */

static void check_entry(gp_mm_job *job, const void *a, gp_elem ea,
                        const void *b, gp_elem eb, const void *c, gp_elem ec,
                        size_t i, size_t j)
{
    size_t n = (size_t)job->n, k = (size_t)job->k;
    /* long double: at least double; 64-bit significand on x86-64, so the
     * reference's own error is far below every tolerance. */
    long double ref = 0.0L, scale = 0.0L, squares = 0.0L;
    for (size_t p = 0; p < k; p++) {
        long double prod = (long double)gp_elem_get(a, ea, i * k + p) *
                           (long double)gp_elem_get(b, eb, p * n + j);
        ref += prod;
        scale += prod < 0 ? -prod : prod;
        squares += ref * ref; /* the partial sums, for the spread */
    }
    if (scale > 0) {
        double spread = (double)(sqrtl(squares) / scale);
        if (spread > job->spread)
            job->spread = spread;
    }
    double value = gp_elem_get(c, ec, i * n + j);
    double err;
    if (isnan(value)) {
        err = NAN;
    } else if (scale > 0) {
        err = (double)(fabsl((long double)value - ref) / scale);
    } else {
        err = (long double)value == ref ? 0.0 : INFINITY;
    }
    int worse;
    if (job->worst_i < 0)
        worse = 1;
    else if (isnan(err))
        worse = !isnan(job->max_error);
    else
        worse = !isnan(job->max_error) && err > job->max_error;
    if (worse) {
        job->max_error = err;
        job->worst_i = (int64_t)i;
        job->worst_j = (int64_t)j;
        job->worst_value = value;
        job->worst_ref = (double)ref;
    }
}

void gp_mm_verify(gp_mm_job *job, const void *a, gp_elem ea, const void *b,
                  gp_elem eb, void *c, gp_elem ec)
{
    if (gp_test_matmul_corrupt)
        gp_test_matmul_corrupt(c, ec, job->m, job->n);

    size_t m = (size_t)job->m, n = (size_t)job->n;
    job->max_error = 0.0;
    job->spread = 0.0;
    job->worst_i = job->worst_j = -1;

    uint64_t samples = (uint64_t)job->verify_samples;
    if ((uint64_t)m * n <= samples) {
        /* Small output: check every entry. (m * n cannot overflow here:
         * both are < 2^31.) */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                check_entry(job, a, ea, b, eb, c, ec, i, j);
    } else {
        /* The four corners catch layout and edge bugs; the rest are
         * seeded random entries (with repetition). */
        const size_t ci[4] = {0, 0, m - 1, m - 1};
        const size_t cj[4] = {0, n - 1, 0, n - 1};
        uint64_t s = gp_random_stream((uint64_t)job->seed, 3);
        for (uint64_t t = 0; t < samples; t++) {
            size_t i, j;
            if (t < 4) {
                i = ci[t];
                j = cj[t];
            } else {
                i = (size_t)(gp_splitmix64(&s) % m);
                j = (size_t)(gp_splitmix64(&s) % n);
            }
            check_entry(job, a, ea, b, eb, c, ec, i, j);
        }
    }
    /* A NaN entry is the worst and stays so (check_entry): max_error is
     * then NaN, which no tolerance passes. */
    job->tolerance = gp_matmul_tolerance(job->dtype, job->k, job->spread);
    job->verified = job->max_error <= job->tolerance;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

/* A sample lasts at least this long when BATCH is automatic. */
#define GP_MM_SAMPLE_S 0.002
/* A warm-up call this slow needs no calibration: one call a sample. */
#define GP_MM_SLOW_CALL_S (4 * GP_MM_SAMPLE_S)
/* The most calls an automatic block holds. */
#define GP_MM_MAX_BATCH ((size_t)1 << 20)
/* Two warm-up windows in a row agree when their medians differ by at
 * most this fraction of the faster: the steady state (docs/matmul.md). */
#define GP_MM_STEADY_TOL 0.02
/* A warm-up window lasts at least this long: a rise too slow to show
 * from one 2 ms block to the next shows from one window to the next. */
#define GP_MM_WINDOW_S 0.05
/* The most blocks a warm-up window holds (on the stack: the search
 * allocates nothing). Blocks of an automatic batch last 2 ms or more when
 * it is chosen, so only calls that turn ten times faster, or a fixed
 * batch of short calls, make a window end here first. */
#define GP_MM_WINDOW_MAX 256
/* The most timed samples without MAX_RUNS (8 MiB of times), and the most
 * warm-up blocks: bounds that only a clock that stands still can reach. */
#define GP_MM_RUNS_CEILING ((size_t)1 << 20)
/* The first capacity of the times without MAX_RUNS (it grows). */
#define GP_MM_TIMES_START ((size_t)128)

static gp_elem input_elem(gpuprobe_dtype d)
{
    switch (d) {
    case GPUPROBE_DTYPE_FP64: return GP_ELEM_F64;
    case GPUPROBE_DTYPE_FP16: return GP_ELEM_F16;
    case GPUPROBE_DTYPE_BF16: return GP_ELEM_BF16;
    default: return GP_ELEM_F32;
    }
}

/* The bytes of A, B and C (C is fp32 for every GPU dtype, fp64 for
 * fp64) into the job, once they are known to fit, with their sum. */
static gpuprobe_status buffer_bytes(gpuprobe_context *ctx, gp_mm_job *job)
{
    size_t ein = gp_elem_size(input_elem(job->dtype));
    size_t eout = job->dtype == GPUPROBE_DTYPE_FP64 ? 8 : 4;
    size_t ba, bb, bc;
    if (gp_mm_bytes(job->m, job->k, ein, &ba) || gp_mm_bytes(job->k, job->n, ein, &bb) ||
        gp_mm_bytes(job->m, job->n, eout, &bc) || ba > SIZE_MAX - bb ||
        ba + bb > SIZE_MAX - bc)
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW,
                       "matmul %lldx%lldx%lld %s: the buffers' size does not "
                       "fit in size_t",
                       (long long)job->m, (long long)job->n, (long long)job->k,
                       gpuprobe_dtype_name(job->dtype));
    job->a_bytes = ba;
    job->b_bytes = bb;
    job->c_bytes = bc;
    return GPUPROBE_OK;
}

/* Is there host memory for the run? A, B and C plus what the backend adds
 * (needs), against MemAvailable, the cgroup limits, RLIMIT_AS and
 * RLIMIT_DATA (gp_host_fits()). */
static gpuprobe_status check_host(gpuprobe_context *ctx, const gp_mm_job *job,
                                  const gp_mm_needs *needs)
{
    size_t abc = job->a_bytes + job->b_bytes + job->c_bytes;
    gp_host_memory hm;
    gpuprobe_status st = gp_host_memory_read(ctx, ctx->sysroot, &hm);
    if (st == GPUPROBE_ERR_OUT_OF_MEMORY)
        return st;
    if (st != GPUPROBE_OK) {
        /* Unknown: go ahead; a failed allocation is still reported. */
        ctx->error[0] = '\0';
        return GPUPROBE_OK;
    }
    /* Each of A, B and C is its own mapping, a page more than asked. */
    uint64_t memory = (uint64_t)abc, space = (uint64_t)abc + 3 * 4096;
    memory = needs->memory > UINT64_MAX - memory ? UINT64_MAX : memory + needs->memory;
    space = needs->address_space > UINT64_MAX - space ? UINT64_MAX
                                                      : space + needs->address_space;
    char what[96], mdetail[192], sdetail[256];
    gp_snprintf(what, sizeof what, "matmul %lldx%lldx%lld %s", (long long)job->m,
                (long long)job->n, (long long)job->k, gpuprobe_dtype_name(job->dtype));
    gp_snprintf(mdetail, sizeof mdetail, "A, B and C %llu bytes%s%s",
                (unsigned long long)abc, needs->memory_text[0] ? ", " : "",
                needs->memory_text);
    gp_snprintf(sdetail, sizeof sdetail, "A, B and C %llu bytes%s%s",
                (unsigned long long)abc, needs->space_text[0] ? ", " : "",
                needs->space_text);
    return gp_host_fits(ctx, &hm, memory, mdetail, space, sdetail, what);
}

/* The dtypes each backend runs are a column of names.h's list. */
static gpuprobe_status check_dtype(gpuprobe_context *ctx, const gp_device *dev,
                                   gpuprobe_dtype dt)
{
    unsigned where = gp_dtype_matmul(dt);
    char list[64];
    if (!where) {
        gp_format_dtypes(list, sizeof list, GP_DTYPES_MATMUL, " or ");
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "matmul dtype %d is not %s",
                       (int)dt, list);
    }
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        char why[160];
        if (where & GP_MATMUL_CPU)
            return GPUPROBE_OK;
        gp_format_dtypes(list, sizeof list, GP_DTYPES_MATMUL_CPU, " and ");
        if (where & GP_MATMUL_CPU_BF16) {
            if (gp_cpu_bf16(ctx, why, sizeof why))
                return GPUPROBE_OK;
            return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                           "matmul in %s on the CPU needs AMX-BF16 tiles or "
                           "AVX512-BF16, which this process cannot use: %s; a CUDA device does it, and the "
                           "CPU's OpenBLAS does %s",
                           gpuprobe_dtype_name(dt), why, list);
        }
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "matmul in %s needs a CUDA device; the CPU backend "
                       "(OpenBLAS) does %s",
                       gpuprobe_dtype_name(dt), list);
    }
    if (!(where & GP_MATMUL_GPU)) {
        gp_format_dtypes(list, sizeof list, GP_DTYPES_MATMUL_GPU, " and ");
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "matmul in %s is done on the CPU only; CUDA devices "
                       "do %s",
                       gpuprobe_dtype_name(dt), list);
    }
    char name[80];
    gp_quote(name, sizeof name, dev->name, 64);
    if ((dt == GPUPROBE_DTYPE_TF32 || dt == GPUPROBE_DTYPE_BF16) &&
        dev->cc_major < 8)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "matmul in %s needs compute capability 8.0 or later "
                       "(Ampere tensor cores); %s (%s) is %d.%d",
                       gpuprobe_dtype_name(dt), dev->spec, name, dev->cc_major,
                       dev->cc_minor);
    return GPUPROBE_OK;
}

/* Seeded inputs in the backend's host buffers, C poisoned: a gemm that
 * writes nothing leaves NaN, which never verifies. */
static void fill_inputs(const gp_mm_job *job, const gp_mm_host *h)
{
    size_t m = (size_t)job->m, n = (size_t)job->n, k = (size_t)job->k;
    gp_fill_random(h->a, h->ea, m * k, job->seed, 1);
    gp_fill_random(h->b, h->eb, k * n, job->seed, 2);
    gp_fill_nan(h->c, h->ec, m * n);
}

/* The calls per sample. BATCH when set; else 1 when the warm-up showed a
 * call of GP_MM_SLOW_CALL_S or more, else the smallest block (grown from
 * one call, at most a hundredfold a step) that lasts GP_MM_SAMPLE_S. The
 * blocks tried are setup, like the warm-up. *block_s: what a block of the
 * chosen size lasted (the last one tried), or the warm-up calls' rate says
 * it lasts (0 without warm-up calls). */
static gpuprobe_status calibrate(gpuprobe_context *ctx, gp_mm_job *job,
                                 const gp_mm_backend *be, void *state, double warm_call,
                                 double *block_s)
{
    if (job->batch > 0 || warm_call >= GP_MM_SLOW_CALL_S) {
        job->reps = job->batch > 0 ? (size_t)job->batch : 1;
        *block_s = warm_call * (double)job->reps;
        return GPUPROBE_OK;
    }
    size_t reps = 1;
    for (;;) {
        double s = 0.0;
        gpuprobe_status st = be->run(ctx, state, reps, &s);
        if (st != GPUPROBE_OK)
            return st;
        job->warmup_s += s;
        *block_s = s;
        if (s >= GP_MM_SAMPLE_S || reps >= GP_MM_MAX_BATCH)
            break;
        /* 1.25 times what this block's rate says, so that the next block
         * is long enough; grown at least 2 and at most 100 times. */
        double want = s > 0 ? ceil(1.25 * GP_MM_SAMPLE_S / (s / (double)reps)) : 100.0 * reps;
        size_t next = want > (double)GP_MM_MAX_BATCH ? GP_MM_MAX_BATCH : (size_t)want;
        if (next < 2 * reps)
            next = 2 * reps;
        if (next > 100 * reps)
            next = 100 * reps;
        reps = next < GP_MM_MAX_BATCH ? next : GP_MM_MAX_BATCH;
    }
    job->reps = reps;
    return GPUPROBE_OK;
}

/* Do two times agree (GP_MM_STEADY_TOL of the faster)? */
static int times_agree(double a, double b)
{
    double lo = a < b ? a : b, hi = a < b ? b : a;
    return hi - lo <= GP_MM_STEADY_TOL * lo;
}

/* The search for the steady state: untimed blocks of BATCH calls, taken
 * in windows of consecutive blocks that last GP_MM_WINDOW_S at least (one
 * block when a block is that long; GP_MM_WINDOW_MAX blocks at most),
 * until the medians of two windows in a row agree. A block is run only
 * while the warm-up (every untimed call included) stays within WARMUP_MS
 * by the backend's clock when it lasts as long as the last block (block_s
 * before the first): the first needs room for two, since one alone proves
 * nothing. job->steady: 1 agreed, 0 the bound came first, -1 no search.
 * *block_s on return: the last window's median when they agreed, else the
 * last block's time. */
static gpuprobe_status steady_state(gpuprobe_context *ctx, gp_mm_job *job,
                                    const gp_mm_backend *be, void *state, double *block_s)
{
    job->steady = -1;
    if (job->warmup_ms == 0)
        return GPUPROBE_OK;
    job->steady = 0;
    double bound = (double)job->warmup_ms / 1000.0, last = *block_s;
    double window[GP_MM_WINDOW_MAX], window_s = 0.0;
    double previous = -1.0; /* the last window's median, -1 before one */
    size_t in_window = 0;
    while (job->warmup_s + (job->warmup_runs ? 1 : 2) * last <= bound &&
           job->warmup_runs < GP_MM_RUNS_CEILING) {
        double s = 0.0;
        gpuprobe_status st = be->run(ctx, state, job->reps, &s);
        if (st != GPUPROBE_OK)
            return st;
        job->warmup_s += s;
        job->warmup_runs++;
        window[in_window++] = s;
        window_s += s;
        last = *block_s = s;
        if (window_s < GP_MM_WINDOW_S && in_window < GP_MM_WINDOW_MAX)
            continue;
        double median = gp_stats_median_inplace(window, in_window);
        if (previous >= 0 && times_agree(previous, median)) {
            job->steady = 1;
            *block_s = median;
            break;
        }
        previous = median;
        in_window = 0;
        window_s = 0.0;
    }
    return GPUPROBE_OK;
}

/* The automatic batch again, from the steady state's rate: the batch was
 * chosen on the first calls, which can be slower (so the block is too
 * small once they are fast); block_s is what a block of it lasts now.
 * Grown so that a block lasts GP_MM_SAMPLE_S; never shrunk. */
static void rebatch(gp_mm_job *job, double block_s)
{
    if (job->batch > 0 || job->steady != 1 || !(block_s > 0) || block_s >= GP_MM_SAMPLE_S)
        return;
    double want = ceil(1.25 * GP_MM_SAMPLE_S / (block_s / (double)job->reps));
    job->reps = want >= (double)GP_MM_MAX_BATCH ? GP_MM_MAX_BATCH : (size_t)want;
}

/* Room for one more time: the capacity doubled, up to the ceiling (the
 * loop never asks past it). */
static gpuprobe_status grow_times(gpuprobe_context *ctx, gp_mm_job *job)
{
    size_t cap = 2 * job->times_cap;
    if (cap > GP_MM_RUNS_CEILING)
        cap = GP_MM_RUNS_CEILING;
    double *t = realloc(job->times, cap * sizeof *t);
    if (!t)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating %zu run times", cap);
    job->times = t;
    job->times_cap = cap;
    return GPUPROBE_OK;
}

/* The timed samples: at least MIN_RUNS; then more until their timed total
 * reaches BUDGET_MS, at most MAX_RUNS when set (else the ceiling). Each is
 * its block's time / BATCH. */
static gpuprobe_status timed_loop(gpuprobe_context *ctx, gp_mm_job *job,
                                  const gp_mm_backend *be, void *state)
{
    size_t min_runs = (size_t)job->min_runs;
    size_t cap = job->max_runs > 0 ? (size_t)job->max_runs : GP_MM_RUNS_CEILING;
    double budget = (double)job->budget_ms / 1000.0, total = 0.0;
    size_t r = 0;
    while (r < min_runs || (r < cap && total < budget)) {
        gpuprobe_status st = GPUPROBE_OK;
        if (r == job->times_cap)
            st = grow_times(ctx, job);
        double s = 0.0;
        if (st == GPUPROBE_OK)
            st = be->run(ctx, state, job->reps, &s);
        if (st != GPUPROBE_OK)
            return st;
        total += s;
        job->times[r++] = s / (double)job->reps;
    }
    job->runs = r;
    return GPUPROBE_OK;
}

/* Steps 2-5, between the backend's prepare() and release(). t0 is when
 * setup began. */
static gpuprobe_status protocol(gpuprobe_context *ctx, gp_mm_job *job,
                                const gp_mm_backend *be, void *state,
                                const gp_mm_host *host, double t0)
{
    gpuprobe_status st;
    double untimed = 0.0, s = 0.0;
    if (be->upload) {
        double w = gp_now();
        st = be->upload(ctx, state, &s);
        if (st != GPUPROBE_OK)
            return st;
        if (job->transfers) {
            job->h2d_s = s;
            untimed = gp_now() - w; /* timed apart: not setup */
        }
    }
    double warm_call = 0.0;
    if (job->warmup > 0) {
        st = be->run(ctx, state, (size_t)job->warmup, &s);
        if (st != GPUPROBE_OK)
            return st;
        job->warmup_s = s;
        warm_call = s / (double)job->warmup;
    }
    double block_s = 0.0;
    st = calibrate(ctx, job, be, state, warm_call, &block_s);
    if (st == GPUPROBE_OK)
        st = steady_state(ctx, job, be, state, &block_s);
    if (st != GPUPROBE_OK)
        return st;
    rebatch(job, block_s);
    job->setup_s = gp_now() - t0 - untimed;

    st = timed_loop(ctx, job, be, state);
    if (st != GPUPROBE_OK)
        return st;
    if (be->download && (job->transfers || job->verify)) {
        st = be->download(ctx, state, &s);
        if (st != GPUPROBE_OK)
            return st;
        if (job->transfers)
            job->d2h_s = s;
    }
    if (job->verify)
        gp_mm_verify(job, host->a, host->ea, host->b, host->eb, host->c, host->ec);
    return GPUPROBE_OK;
}

/* The whole run on one backend: its needs checked, prepare, inputs, the
 * protocol, release on every path. */
static gpuprobe_status run_on(gpuprobe_context *ctx, gp_mm_job *job, const gp_mm_backend *be)
{
    gp_mm_needs needs;
    memset(&needs, 0, sizeof needs);
    gpuprobe_status st = buffer_bytes(ctx, job); /* overflow: before any loading */
    if (st == GPUPROBE_OK && be->needs)
        st = be->needs(ctx, job, &needs);
    if (st == GPUPROBE_OK)
        st = check_host(ctx, job, &needs);
    if (st != GPUPROBE_OK)
        return st;
    double t0 = gp_now();
    gp_mm_host host;
    void *state = NULL;
    st = be->prepare(ctx, job, &host, &state);
    if (st != GPUPROBE_OK)
        return st;
    fill_inputs(job, &host);
    st = protocol(ctx, job, be, state, &host, t0);
    return be->release(ctx, state, st);
}

static void fill_result(gpuprobe_matmul_result *r, const gp_mm_job *job)
{
    size_t nr = job->runs;
    double *t = job->times;
    r->d[GPUPROBE_METRIC_MIN_S] = gp_stats_min(t, nr);
    r->d[GPUPROBE_METRIC_MAX_S] = gp_stats_max(t, nr);
    r->d[GPUPROBE_METRIC_MEAN_S] = gp_stats_mean(t, nr);
    r->d[GPUPROBE_METRIC_STDDEV_S] = gp_stats_stddev(t, nr);
    gp_stats_sort(t, nr); /* last: the figures above read them unsorted */
    double median = gp_stats_quantile_sorted(t, nr, 0.5);
    r->d[GPUPROBE_METRIC_MEDIAN_S] = median;
    r->iqr_s = gp_stats_quantile_sorted(t, nr, 0.75) - gp_stats_quantile_sorted(t, nr, 0.25);
    r->warmup_s = job->warmup_s;
    double flop = 2.0 * (double)job->m * (double)job->n * (double)job->k;
    double gflops = median > 0 ? flop / median / 1e9 : 0.0;
    r->d[GPUPROBE_METRIC_GFLOPS] = gflops;
    r->d[GPUPROBE_METRIC_SETUP_S] = job->setup_s;
    r->d[GPUPROBE_METRIC_H2D_S] = job->h2d_s;
    r->d[GPUPROBE_METRIC_D2H_S] = job->d2h_s;
    r->d[GPUPROBE_METRIC_MAX_ERROR] = job->verified < 0 ? 0.0 : job->max_error;
    r->d[GPUPROBE_METRIC_TOLERANCE] = job->verified < 0 ? 0.0 : job->tolerance;

    const gp_device *dev = job->dev;
    double peak = 0.0;
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        /* Cores doing the work: the threads used, at most the cores. */
        int cores = job->threads;
        if (dev->logical_cores > 0 && (cores <= 0 || cores > dev->logical_cores))
            cores = dev->logical_cores;
        double per_cycle = job->cpu_flops_per_cycle > 0
                               ? job->cpu_flops_per_cycle
                               : gp_cpu_flops_per_cycle(dev->simd, job->dtype);
        peak = (double)dev->clock_khz * 1e3 * (double)cores * per_cycle / 1e9;
    } else {
        peak = (double)dev->clock_khz * 1e3 * (double)dev->multiprocessors *
               gp_gpu_flops_per_clock_sm(dev->cc_major, dev->cc_minor,
                                         job->dtype) / 1e9;
    }
    if (!(peak > 0))
        peak = 0.0;
    r->d[GPUPROBE_METRIC_PEAK_GFLOPS] = peak;
    r->d[GPUPROBE_METRIC_PEAK_FRACTION] = peak > 0 ? gflops / peak : 0.0;

    r->verified = job->verified;
    r->runs = (int64_t)nr;
    r->batch = (int64_t)job->reps;
    r->warmup_runs = (int64_t)job->warmup_runs;
    r->steady = job->steady;
    r->threads = job->threads;
    r->m = job->m;
    r->n = job->n;
    r->k = job->k;
    r->dtype = job->dtype;
    r->device = (int64_t)job->device_index;
    gp_strlcpy(r->device_name, dev->name, sizeof r->device_name);
    gp_strlcpy(r->backend, job->backend, sizeof r->backend);
    gp_strlcpy(r->math_mode, job->math_mode, sizeof r->math_mode);
    gp_strlcpy(r->compute_type, job->compute_type, sizeof r->compute_type);
}

/* The job from the options (or the defaults when NULL). */
static void job_from_options(const gpuprobe_matmul_options *options, size_t device,
                             gp_mm_job *job)
{
    gp_params defaults;
    const gp_params *opts = &defaults;
    if (options)
        opts = &options->p;
    else
        gp_params_init(&defaults, &mm_table);
    memset(job, 0, sizeof *job);
    job->m = opt(opts, GPUPROBE_MATMUL_M);
    job->n = opt(opts, GPUPROBE_MATMUL_N);
    job->k = opt(opts, GPUPROBE_MATMUL_K);
    job->dtype = (gpuprobe_dtype)opt(opts, GPUPROBE_MATMUL_DTYPE);
    job->warmup = opt(opts, GPUPROBE_MATMUL_WARMUP);
    job->min_runs = opt(opts, GPUPROBE_MATMUL_MIN_RUNS);
    job->max_runs = opt(opts, GPUPROBE_MATMUL_MAX_RUNS);
    if (job->max_runs > 0 && job->max_runs < job->min_runs)
        job->max_runs = job->min_runs;
    job->warmup_ms = opt(opts, GPUPROBE_MATMUL_WARMUP_MS);
    job->budget_ms = opt(opts, GPUPROBE_MATMUL_BUDGET_MS);
    job->batch = opt(opts, GPUPROBE_MATMUL_BATCH);
    job->transfers = (int)opt(opts, GPUPROBE_MATMUL_TRANSFERS);
    job->verify = (int)opt(opts, GPUPROBE_MATMUL_VERIFY);
    job->seed = (uint64_t)opt(opts, GPUPROBE_MATMUL_SEED);
    job->cpu_threads = opt(opts, GPUPROBE_MATMUL_CPU_THREADS);
    job->verify_samples = opt(opts, GPUPROBE_MATMUL_VERIFY_SAMPLES);
    job->verified = -1;
    job->device_index = device;
    /* Every value is in its bounds (mm_info): the setter refuses the
     * others, and the defaults are in them. */
}

/* GPUPROBE_ERR_VERIFY_FAILED with the worst sample, for a failed check
 * (one fails only on an entry it checked: worst_i and worst_j are set). */
static gpuprobe_status verify_failed(gpuprobe_context *ctx, const gp_mm_job *job)
{
    const char *dt = gpuprobe_dtype_name(job->dtype), *spec = job->dev->spec;
    return gp_fail(ctx, GPUPROBE_ERR_VERIFY_FAILED,
                   "matmul %s on %s failed verification: C[%lld][%lld] = "
                   "%.9g, reference %.9g, scaled error %.3g %s tolerance "
                   "%.3g",
                   dt, spec, (long long)job->worst_i, (long long)job->worst_j,
                   job->worst_value, job->worst_ref, job->max_error,
                   isnan(job->max_error) ? "(NaN) vs" : ">", job->tolerance);
}

/* The run itself, the arguments checked: *out set on OK and on
 * VERIFY_FAILED, NULL otherwise. */
static gpuprobe_status run_job(gpuprobe_context *ctx, size_t device,
                               const gpuprobe_matmul_options *opts,
                               gpuprobe_matmul_result **out)
{
    gp_mm_job job;
    job_from_options(opts, device, &job);
    gpuprobe_status st = gp_get_device(ctx, device, &job.dev);
    if (st == GPUPROBE_OK)
        st = check_dtype(ctx, job.dev, job.dtype);
    if (st != GPUPROBE_OK)
        return st;

    /* Room for every run when they are capped, else for MIN_RUNS or
     * GP_MM_TIMES_START, grown as the budget asks (grow_times()). */
    job.times_cap = (size_t)(job.max_runs > 0 ? job.max_runs : job.min_runs);
    if (job.max_runs == 0 && job.times_cap < GP_MM_TIMES_START)
        job.times_cap = GP_MM_TIMES_START;
    job.times = calloc(job.times_cap, sizeof *job.times);
    if (!job.times)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating %zu run times",
                       job.times_cap);
    const gp_mm_backend *be =
        job.dev->kind == GPUPROBE_DEVICE_CPU ? &gp_cpu_backend : &gp_cuda_backend;
    if (gp_test_matmul_backend)
        be = gp_test_matmul_backend;
    st = run_on(ctx, &job, be);
    gpuprobe_matmul_result *r = NULL;
    if (st == GPUPROBE_OK && job.runs == 0)
        st = gp_fail(ctx, GPUPROBE_ERR_INTERNAL, "matmul backend made no runs");
    if (st == GPUPROBE_OK && !(r = calloc(1, sizeof *r)))
        st = gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the matmul result");
    if (st != GPUPROBE_OK) {
        free(job.times);
        return st;
    }
    fill_result(r, &job);
    free(job.times);
    *out = r;
    return job.verified == 0 ? verify_failed(ctx, &job) : GPUPROBE_OK;
}

gpuprobe_status gpuprobe_matmul_run(gpuprobe_context *ctx, size_t device,
                                    const gpuprobe_matmul_options *opts,
                                    unsigned flags,
                                    gpuprobe_matmul_result **out)
{
    if (out)
        *out = NULL; /* documented: NULL on every failure but VERIFY_FAILED */
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_matmul_run: out is NULL");
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_matmul_run: flags must be 0 (got 0x%x)", flags);
    gpuprobe_status st = run_job(ctx, device, opts, out);
    return st == GPUPROBE_OK ? gp_ok(ctx) : st;
}

gpuprobe_status gp_matmul_flops(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dtype,
                                int64_t m, int64_t n, int64_t k, int64_t budget_ms,
                                int64_t cpu_threads, double *flops, int *threads_used)
{
    gpuprobe_matmul_options o;
    gp_params_init(&o.p, &mm_table);
    const int64_t v[][2] = {
        {GPUPROBE_MATMUL_M, m}, {GPUPROBE_MATMUL_N, n}, {GPUPROBE_MATMUL_K, k},
        {GPUPROBE_MATMUL_DTYPE, dtype}, {GPUPROBE_MATMUL_MIN_RUNS, 3},
        {GPUPROBE_MATMUL_BUDGET_MS, budget_ms}, {GPUPROBE_MATMUL_WARMUP_MS, budget_ms},
        {GPUPROBE_MATMUL_TRANSFERS, 0}, {GPUPROBE_MATMUL_VERIFY_SAMPLES, 16},
        {GPUPROBE_MATMUL_CPU_THREADS, cpu_threads},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (gp_params_set(&o.p, (int)v[i][0], v[i][1]) != GPUPROBE_OK)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "a matmul of %lld x %lld x %lld in %s cannot be timed",
                           (long long)m, (long long)n, (long long)k,
                           gpuprobe_dtype_name(dtype));
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = run_job(ctx, device, &o, &r);
    if (st == GPUPROBE_OK) {
        *flops = r->d[GPUPROBE_METRIC_GFLOPS] * 1e9;
        *threads_used = r->threads;
    }
    gpuprobe_matmul_result_destroy(r);
    return st;
}
