/*
 * test_matmul.c - the timed matmul: correctness at awkward shapes,
 * options, verification (through the corruption seam), bad input, the
 * OpenBLAS thread count, a GPU request on a machine without one, and the
 * fp16/bf16 conversions.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuprobe.h"
#include "matmul_internal.h"

/* ---- helpers ------------------------------------------------------------ */

static gpuprobe_context *new_ctx(void)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    return ctx;
}

static gpuprobe_matmul_options *small_opts(int64_t m, int64_t n, int64_t k,
                                           gpuprobe_dtype dt)
{
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, m), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, n), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, k), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 3), GPUPROBE_OK);
    return o;
}

static double get_d(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    double v = -12345;
    assert_int_equal(gpuprobe_matmul_result_get_double(r, m, &v), GPUPROBE_OK);
    return v;
}

static int64_t get_i(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    int64_t v = -12345;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, m, &v), GPUPROBE_OK);
    return v;
}

static const char *get_s(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    const char *v = NULL;
    assert_int_equal(gpuprobe_matmul_result_get_string(r, m, &v), GPUPROBE_OK);
    assert_non_null(v);
    return v;
}

/* The seam used as an observer: keep a copy of C as the device left it. */
static double *seen_c;
static size_t seen_count;
static void observe_c(void *c, gp_elem ec, int64_t m, int64_t n)
{
    seen_count = (size_t)m * (size_t)n;
    seen_c = malloc(seen_count * sizeof *seen_c);
    if (seen_c)
        for (size_t i = 0; i < seen_count; i++)
            seen_c[i] = gp_elem_get(c, ec, i);
}

/* ---- correctness at awkward shapes -------------------------------------- */

static void check_shape(gpuprobe_context *ctx, int64_t m, int64_t n, int64_t k,
                        gpuprobe_dtype dt)
{
    gpuprobe_matmul_options *o = small_opts(m, n, k, dt);
    gpuprobe_matmul_result *r = NULL;
    seen_c = NULL;
    gp_test_matmul_corrupt = observe_c;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    gp_test_matmul_corrupt = NULL;
    if (st != GPUPROBE_OK)
        fail_msg("%lldx%lldx%lld %s: %s: %s", (long long)m, (long long)n,
                 (long long)k, gpuprobe_dtype_name(dt),
                 gpuprobe_status_name(st), gpuprobe_last_error(ctx));
    assert_non_null(r);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_VERIFIED), 1);
    assert_true(get_d(r, GPUPROBE_METRIC_MAX_ERROR) <=
                get_d(r, GPUPROBE_METRIC_TOLERANCE));
    assert_int_equal(get_i(r, GPUPROBE_METRIC_M), m);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_N), n);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_K), k);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_DTYPE), dt);

    /* Our own naive reference on a few full entries, from the same seeded
     * inputs (streams 1 and 2 are A and B). */
    assert_non_null(seen_c);
    assert_int_equal(seen_count, (size_t)(m * n));
    gp_elem e = dt == GPUPROBE_DTYPE_FP64 ? GP_ELEM_F64 : GP_ELEM_F32;
    size_t es = gp_elem_size(e);
    void *a = malloc((size_t)(m * k) * es), *b = malloc((size_t)(k * n) * es);
    assert_non_null(a);
    assert_non_null(b);
    gp_fill_random(a, e, (size_t)(m * k), 42, 1);
    gp_fill_random(b, e, (size_t)(k * n), 42, 2);
    const int64_t pick[][2] = {{0, 0}, {m - 1, n - 1}, {m / 2, n / 3}, {m - 1, 0}};
    for (size_t t = 0; t < sizeof pick / sizeof pick[0]; t++) {
        int64_t i = pick[t][0], j = pick[t][1];
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
            double x = gp_elem_get(a, e, (size_t)(i * k + p)) *
                       gp_elem_get(b, e, (size_t)(p * n + j));
            ref += x;
            mag += fabs(x);
        }
        double got = seen_c[i * n + j];
        double tol = (dt == GPUPROBE_DTYPE_FP64 ? 1e-13 : 1e-5) * mag;
        if (!(fabs(got - ref) <= tol))
            fail_msg("%lldx%lldx%lld %s C[%lld][%lld] = %.17g, naive %.17g",
                     (long long)m, (long long)n, (long long)k,
                     gpuprobe_dtype_name(dt), (long long)i, (long long)j, got, ref);
    }
    free(a);
    free(b);
    free(seen_c);
    seen_c = NULL;
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
}

static void test_shapes(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    static const int64_t shapes[][3] = {
        {1, 1, 1}, {7, 13, 11}, {13, 7, 11}, {1, 17, 3}, {29, 1, 5},
        {31, 37, 1}, {100, 37, 129}, {65, 63, 67}, {256, 250, 3},
        {3, 5, 256},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        check_shape(ctx, shapes[s][0], shapes[s][1], shapes[s][2], GPUPROBE_DTYPE_FP32);
        check_shape(ctx, shapes[s][0], shapes[s][1], shapes[s][2], GPUPROBE_DTYPE_FP64);
    }
    gpuprobe_context_destroy(ctx);
}

static void test_result_figures(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = small_opts(96, 80, 64, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    int64_t runs = get_i(r, GPUPROBE_METRIC_RUNS);
    assert_true(runs >= 2 && runs <= 3);
    double med = get_d(r, GPUPROBE_METRIC_MEDIAN_S);
    double mn = get_d(r, GPUPROBE_METRIC_MIN_S), mx = get_d(r, GPUPROBE_METRIC_MAX_S);
    double mean = get_d(r, GPUPROBE_METRIC_MEAN_S);
    assert_true(mn > 0 && mn <= med && med <= mx && mn <= mean && mean <= mx);
    assert_true(get_d(r, GPUPROBE_METRIC_STDDEV_S) >= 0);
    double gf = get_d(r, GPUPROBE_METRIC_GFLOPS);
    assert_true(fabs(gf - 2.0 * 96 * 80 * 64 / med / 1e9) <= 1e-9 * gf);
    assert_true(get_d(r, GPUPROBE_METRIC_SETUP_S) > 0);
    assert_true(get_d(r, GPUPROBE_METRIC_H2D_S) == 0);
    assert_true(get_d(r, GPUPROBE_METRIC_D2H_S) == 0);
    assert_true(get_d(r, GPUPROBE_METRIC_PEAK_GFLOPS) >= 0);
    assert_true(get_d(r, GPUPROBE_METRIC_PEAK_FRACTION) >= 0);
    assert_true(get_i(r, GPUPROBE_METRIC_THREADS) >= 1);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_DEVICE), 0);
    assert_true(strncmp(get_s(r, GPUPROBE_METRIC_BACKEND), "OpenBLAS", 8) == 0);
    assert_string_equal(get_s(r, GPUPROBE_METRIC_COMPUTE_TYPE), "cblas_sgemm");
    assert_string_equal(get_s(r, GPUPROBE_METRIC_MATH_MODE), "");
    assert_true(strlen(get_s(r, GPUPROBE_METRIC_DEVICE_NAME)) > 0);
    /* Wrong getter types and unknown metrics. */
    double d;
    int64_t i;
    const char *s;
    assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_RUNS, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_GFLOPS, &i), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_M, &s), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_int(r, (gpuprobe_matmul_metric)25, &i), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_matmul_result_destroy(r);

    /* fp64 reports dgemm; no verification when asked. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY, 0);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_string_equal(get_s(r, GPUPROBE_METRIC_COMPUTE_TYPE), "cblas_dgemm");
    assert_int_equal(get_i(r, GPUPROBE_METRIC_VERIFIED), -1);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

static void test_runs_and_budget(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = small_opts(16, 16, 16, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    /* MAX below MIN: MIN wins. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 7);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 2);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 7);
    gpuprobe_matmul_result_destroy(r);
    /* A budget keeps it going past MIN, up to MAX. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 40);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 200);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 40);
    gpuprobe_matmul_result_destroy(r);
    /* No budget: exactly MIN. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 0);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 3);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 3);
    gpuprobe_matmul_result_destroy(r);
    /* NULL options: the defaults (5000^3 would be slow: only check that
     * the defaults are what NULL means through the getters instead). */
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- options ------------------------------------------------------------- */

static void test_options(void **state)
{
    (void)state;
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    static const int64_t defaults[13] = {5000, 5000, 5000, GPUPROBE_DTYPE_FP32,
                                         1, 5, 100, 0, 1, 1, 42, 0, 256};
    for (int p = 0; p < 13; p++) {
        int64_t v = -1;
        assert_int_equal(gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)p, &v), GPUPROBE_OK);
        assert_int_equal(v, defaults[p]);
    }
    /* N and K follow M until set. */
    int64_t v;
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 300), GPUPROBE_OK);
    gpuprobe_matmul_options_get(o, GPUPROBE_MATMUL_N, &v);
    assert_int_equal(v, 300);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 7);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 50);
    gpuprobe_matmul_options_get(o, GPUPROBE_MATMUL_N, &v);
    assert_int_equal(v, 7);
    gpuprobe_matmul_options_get(o, GPUPROBE_MATMUL_K, &v);
    assert_int_equal(v, 50);

    /* Bounds: both ends accepted and read back; one past refused, value kept. */
    for (int p = 0; p < 13; p++) {
        int64_t lo, hi, before, after;
        assert_int_equal(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)p, &lo, &hi), GPUPROBE_OK);
        assert_true(lo <= defaults[p] && defaults[p] <= hi);
        assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)p, lo), GPUPROBE_OK);
        gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)p, &v);
        assert_int_equal(v, lo);
        assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)p, hi), GPUPROBE_OK);
        gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)p, &before);
        assert_int_equal(before, hi);
        if (lo > INT64_MIN)
            assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)p, lo - 1),
                             GPUPROBE_ERR_INVALID_ARGUMENT);
        if (hi < INT64_MAX)
            assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)p, hi + 1),
                             GPUPROBE_ERR_INVALID_ARGUMENT);
        gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)p, &after);
        assert_int_equal(after, before);
    }
    /* Specific bounds the API promises. */
    int64_t lo, hi;
    gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_MIN_RUNS, &lo, &hi);
    assert_int_equal(lo, 1);
    gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_M, &lo, &hi);
    assert_int_equal(lo, 1);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP8),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, 99),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* Unknown parameters. */
    assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)13, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)-1, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)13, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)13, &lo, &hi), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_set(NULL, GPUPROBE_MATMUL_M, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_get(o, GPUPROBE_MATMUL_M, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_create(NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_matmul_options_destroy(NULL);
    gpuprobe_matmul_result_destroy(NULL);
}

/* ---- verification catches bad output ------------------------------------ */

static int64_t corrupt_i, corrupt_j;
static double corrupt_value;
static void corrupt_c(void *c, gp_elem ec, int64_t m, int64_t n)
{
    (void)m;
    size_t idx = (size_t)(corrupt_i * n + corrupt_j);
    double v = isnan(corrupt_value) ? NAN
                                    : gp_elem_get(c, ec, idx) + corrupt_value;
    gp_elem_set(c, ec, idx, v);
}

static void expect_caught(gpuprobe_dtype dt, int64_t m, int64_t n, int64_t k,
                          int64_t samples, int64_t i, int64_t j, double delta)
{
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = small_opts(m, n, k, dt);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY_SAMPLES, samples);
    corrupt_i = i;
    corrupt_j = j;
    corrupt_value = delta;
    gp_test_matmul_corrupt = corrupt_c;
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    gp_test_matmul_corrupt = NULL;
    assert_int_equal(st, GPUPROBE_ERR_VERIFY_FAILED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "verification"));
    /* The figures are still readable. */
    assert_non_null(r);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_VERIFIED), 0);
    double err = get_d(r, GPUPROBE_METRIC_MAX_ERROR);
    if (isnan(delta))
        assert_true(isnan(err));
    else
        assert_true(err > get_d(r, GPUPROBE_METRIC_TOLERANCE));
    assert_true(get_d(r, GPUPROBE_METRIC_MEDIAN_S) > 0);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

static void test_verify_catches(void **state)
{
    (void)state;
    /* A wrong value at an interior entry, every entry checked. */
    expect_caught(GPUPROBE_DTYPE_FP32, 12, 10, 9, 256, 5, 4, 0.5);
    /* A small relative error (1e-3 of an entry's scale) in fp32. */
    expect_caught(GPUPROBE_DTYPE_FP32, 20, 20, 64, 1000, 3, 17, 1e-3);
    /* A NaN, fp32 and fp64. */
    expect_caught(GPUPROBE_DTYPE_FP32, 12, 10, 9, 256, 11, 9, NAN);
    expect_caught(GPUPROBE_DTYPE_FP64, 12, 10, 9, 256, 0, 0, NAN);
    /* Sampled mode: a corner is always among the samples. */
    expect_caught(GPUPROBE_DTYPE_FP32, 64, 48, 32, 8, 0, 47, 1.0);
    expect_caught(GPUPROBE_DTYPE_FP64, 64, 48, 32, 4, 63, 0, 1e-9);
}

static void test_tolerance(void **state)
{
    (void)state;
    /* Ordered by precision, NaN-free. IEEE accumulation (fp64, fp32): from
     * the data's spread R, u (2 + min(k, 8 R)), the same at any depth past
     * 8 R; tensor cores (tf32, fp16, bf16): growing with k. */
    for (int64_t k = 1; k <= 1 << 20; k *= 4) {
        double f64 = gp_matmul_tolerance(GPUPROBE_DTYPE_FP64, k, 1.0);
        double f32 = gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, k, 1.0);
        double tf = gp_matmul_tolerance(GPUPROBE_DTYPE_TF32, k, 1.0);
        double h = gp_matmul_tolerance(GPUPROBE_DTYPE_FP16, k, 1.0);
        assert_true(0 < f64 && f64 < f32 && f32 < h && h < tf);
        assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP16, k * 4, 1.0) > h);
        assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, k, 2.0) >= f32);
    }
    const double u = 0x1p-24;
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, 1, 1.0) == 3 * u);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, 5, 3.0) == 7 * u);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, 100000, 1.5) == 14 * u);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, 100000, 0.0) == 2 * u);
    /* At the lesson's size, a transposition bug (error ~2/sqrt(k)) fails
     * every precision. */
    double bug = 2.0 / sqrt(5000.0);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_TF32, 5000, 1.0) < bug / 4);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_BF16, 5000, 1.0) < bug / 100);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_INT8, 5000, 1.0) == 0);
}

/* ---- fp32 silently computed in TF32 -------------------------------------- */

static int64_t tf32_k;
static int tf32_truncate;

/* fp32 to TF32 (10 mantissa bits): round to nearest even, or truncate. */
static float to_tf32(float x, int truncate)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    if (!truncate)
        b += 0xfffu + ((b >> 13) & 1u);
    b &= ~0x1fffu;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* Replace C by what a device that feeds TF32 tensor cores computes: the
 * product of A and B (regenerated from the seed) with TF32 inputs and
 * fp32 accumulation. */
static void compute_as_tf32(void *c, gp_elem ec, int64_t m, int64_t n)
{
    assert_int_equal(ec, GP_ELEM_F32);
    size_t na = (size_t)(m * tf32_k), nb = (size_t)(tf32_k * n);
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    gp_fill_random(a, GP_ELEM_F32, na, 42, 1);
    gp_fill_random(b, GP_ELEM_F32, nb, 42, 2);
    for (size_t i = 0; i < na; i++)
        a[i] = to_tf32(a[i], tf32_truncate);
    for (size_t i = 0; i < nb; i++)
        b[i] = to_tf32(b[i], tf32_truncate);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                (int)tf32_k, 1.0f, a, (int)tf32_k, b, (int)n, 0.0f, c, (int)n);
    free(a);
    free(b);
}

/* At k = 100,000 (beyond where a sqrt(k) bound could see it), fp32
 * computed with TF32 inputs fails verification, rounded or truncated,
 * while the real fp32 result passes with room to spare. */
static void test_verify_catches_tf32(void **state)
{
    (void)state;
    tf32_k = 100000;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = small_opts(16, 16, tf32_k, GPUPROBE_DTYPE_FP32);
    for (tf32_truncate = 0; tf32_truncate < 2; tf32_truncate++) {
        gp_test_matmul_corrupt = compute_as_tf32;
        gpuprobe_matmul_result *r = NULL;
        gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
        gp_test_matmul_corrupt = NULL;
        assert_non_null(r);
        double err = get_d(r, GPUPROBE_METRIC_MAX_ERROR);
        double tol = get_d(r, GPUPROBE_METRIC_TOLERANCE);
        print_message("TF32 (%s) at k = %lld: error %.3g, tolerance %.3g\n",
                      tf32_truncate ? "truncated" : "rounded", (long long)tf32_k,
                      err, tol);
        assert_int_equal(st, GPUPROBE_ERR_VERIFY_FAILED);
        assert_int_equal(get_i(r, GPUPROBE_METRIC_VERIFIED), 0);
        assert_true(err > tol);
        gpuprobe_matmul_result_destroy(r);
    }
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    double err = get_d(r, GPUPROBE_METRIC_MAX_ERROR);
    double tol = get_d(r, GPUPROBE_METRIC_TOLERANCE);
    print_message("fp32 at k = %lld: error %.3g, tolerance %.3g\n",
                  (long long)tf32_k, err, tol);
    assert_true(err < tol / 4);
    /* The tolerance is the data's (~20 u), not the sqrt(k) one (~330 u). */
    assert_true(tol < 40 * 0x1p-24);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

static void test_peaks(void **state)
{
    (void)state;
    assert_true(gp_gpu_flops_per_clock_sm(8, 0, GPUPROBE_DTYPE_FP32) == 128);
    assert_true(gp_gpu_flops_per_clock_sm(8, 0, GPUPROBE_DTYPE_TF32) == 1024);
    assert_true(gp_gpu_flops_per_clock_sm(8, 0, GPUPROBE_DTYPE_BF16) == 2048);
    assert_true(gp_gpu_flops_per_clock_sm(9, 0, GPUPROBE_DTYPE_FP32) == 256);
    assert_true(gp_gpu_flops_per_clock_sm(9, 0, GPUPROBE_DTYPE_TF32) == 2048);
    assert_true(gp_gpu_flops_per_clock_sm(9, 0, GPUPROBE_DTYPE_FP16) == 4096);
    assert_true(gp_gpu_flops_per_clock_sm(7, 0, GPUPROBE_DTYPE_TF32) == 0);
    assert_true(gp_gpu_flops_per_clock_sm(3, 5, GPUPROBE_DTYPE_FP32) == 0);
    assert_true(gp_gpu_flops_per_clock_sm(9, 0, GPUPROBE_DTYPE_FP64) == 0);
    assert_true(gp_cpu_flops_per_cycle(GPUPROBE_SIMD_AVX2_FMA, GPUPROBE_DTYPE_FP32) == 32);
    assert_true(gp_cpu_flops_per_cycle(GPUPROBE_SIMD_AVX2_FMA, GPUPROBE_DTYPE_FP64) == 16);
    assert_true(gp_cpu_flops_per_cycle(GPUPROBE_SIMD_AVX512, GPUPROBE_DTYPE_FP32) == 64);
    assert_true(gp_cpu_flops_per_cycle(GPUPROBE_SIMD_AVX, GPUPROBE_DTYPE_FP64) == 8);
    assert_true(gp_cpu_flops_per_cycle(GPUPROBE_SIMD_NONE, GPUPROBE_DTYPE_FP32) == 0);
    assert_true(gp_cpu_flops_per_cycle(GPUPROBE_SIMD_AVX512, GPUPROBE_DTYPE_FP16) == 0);
}

/* ---- bad input ------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = small_opts(8, 8, 8, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;

    assert_int_equal(gpuprobe_matmul_run(NULL, 0, o, 0, &r), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 2, &r), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_null(r);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    r = (gpuprobe_matmul_result *)&r;
    assert_int_equal(gpuprobe_matmul_run(ctx, 1000, o, 0, &r), GPUPROBE_ERR_NOT_FOUND);
    assert_null(r);

    /* Precisions the CPU cannot do. */
    for (int dt = GPUPROBE_DTYPE_TF32; dt <= GPUPROBE_DTYPE_BF16; dt++) {
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
        assert_null(r);
        assert_non_null(strstr(gpuprobe_last_error(ctx), gpuprobe_dtype_name((gpuprobe_dtype)dt)));
    }

    /* Buffers whose size overflows size_t: (2^31-1)^2 x 8 bytes > 2^64. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, INT32_MAX);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OVERFLOW);
    assert_null(r);

    /* Larger than any RAM (3 x 2^40 x 4 bytes = 12 TiB), refused before any
     * allocation: the call returns at once with both figures. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 1 << 20);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 1 << 20);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 1 << 20);
    double t0 = gp_now();
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_true(gp_now() - t0 < 2.0);
    assert_null(r);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "13194139533312 bytes"));
    assert_non_null(strstr(gpuprobe_last_error(ctx), "available"));

    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* A fake /proc/meminfo with 512 kB available: 256x256x256 fp32 needs 768 KiB. */
static void test_host_memory_limit(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mm-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[64], file[96];
    snprintf(dir, sizeof dir, "%s/proc", root);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/meminfo", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("MemTotal:        1024 kB\nMemFree:          512 kB\n"
          "MemAvailable:     512 kB\n", f);
    fclose(f);

    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_matmul_options *o = small_opts(256, 256, 256, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(r);
    const char *msg = gpuprobe_last_error(ctx);
    assert_non_null(strstr(msg, "786432 bytes"));
    assert_non_null(strstr(msg, "524288 bytes"));
    /* A size that fits runs. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 64);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);

    unlink(file);
    rmdir(dir);
    rmdir(root);
}

/* A cgroup v2 limit (fake tree): room for A, B and C of 512^3 fp32
 * (3 MiB) but not for OpenBLAS's packed panels as well (up to 4 x 512 x
 * (T x 512 + 512) bytes): refused naming the cgroup limit, where the run
 * would have been killed by the kernel. With room for both, it runs. */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0700);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_cgroup_room_counts_openblas(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mm-XXXXXX";
    assert_non_null(mkdtemp(root));
    put_file(root, "proc/meminfo", "MemTotal: 16777216 kB\nMemAvailable: 12582912 kB\n");
    put_file(root, "proc/self/cgroup", "0::/job\n");
    char limit[32];
    const uint64_t abc = 3 * 512 * 512 * 4;
    snprintf(limit, sizeof limit, "%llu\n", (unsigned long long)(abc + 65536));
    put_file(root, "sys/fs/cgroup/job/memory.max", limit);
    put_file(root, "sys/fs/cgroup/job/memory.current", "0\n");

    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_matmul_options *o = small_opts(512, 512, 512, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(r);
    const char *msg = gpuprobe_last_error(ctx);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "the cgroup memory limit leaves"));
    assert_non_null(strstr(msg, "A, B and C 3145728 bytes"));
    assert_non_null(strstr(msg, "packed panels"));

    snprintf(limit, sizeof limit, "%llu\n", (unsigned long long)(abc + (64u << 20)));
    put_file(root, "sys/fs/cgroup/job/memory.max", limit);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* ---- OpenBLAS thread count is restored ----------------------------------- */

static void test_threads_restored(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    int before = openblas_get_num_threads();
    int want = before == 1 ? 2 : 1;
    gpuprobe_matmul_options *o = small_opts(32, 32, 32, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, want);
    gpuprobe_matmul_result *r = NULL;

    /* Success. */
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_THREADS), want);
    gpuprobe_matmul_result_destroy(r);
    assert_int_equal(openblas_get_num_threads(), before);

    /* Verification failure, after the threads were changed. */
    corrupt_i = corrupt_j = 0;
    corrupt_value = NAN;
    gp_test_matmul_corrupt = corrupt_c;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_VERIFY_FAILED);
    gp_test_matmul_corrupt = NULL;
    gpuprobe_matmul_result_destroy(r);
    assert_int_equal(openblas_get_num_threads(), before);

    /* Errors before any run. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP16);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(openblas_get_num_threads(), before);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, INT32_MAX);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OVERFLOW);
    assert_int_equal(openblas_get_num_threads(), before);

    /* CPU_THREADS 0 leaves the setting alone and reports it. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 16);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 16);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 16);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 0);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_THREADS), before);
    gpuprobe_matmul_result_destroy(r);

    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- a GPU request without a usable GPU ----------------------------------- */

static void test_gpu_request_without_gpu(void **state)
{
    (void)state;
    static const gp_fake_cuda_device devs[] = {
        {"Fake H100", 9, 0, UINT64_C(80) << 30, UINT64_C(79) << 30, 0},
        {"Fake V100", 7, 0, UINT64_C(16) << 30, UINT64_C(15) << 30, 0},
    };
    static const gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, "simulated", 2, devs};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &fake);
    size_t count = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &count), GPUPROBE_OK);
    assert_int_equal(count, 3);

    gpuprobe_matmul_options *o = small_opts(64, 64, 64, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    for (int dt = GPUPROBE_DTYPE_FP32; dt <= GPUPROBE_DTYPE_BF16; dt++) {
        if (dt == GPUPROBE_DTYPE_FP64)
            continue;
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
        gpuprobe_status st = gpuprobe_matmul_run(ctx, 1, o, 0, &r);
        /* No driver here, or a simulated device: a clean, named refusal. */
        assert_true(st == GPUPROBE_ERR_CUDA_UNAVAILABLE || st == GPUPROBE_ERR_CUDA);
        assert_null(r);
        assert_true(strlen(gpuprobe_last_error(ctx)) > 10);
    }
    /* fp64 is CPU-only; tf32 and bf16 need compute capability 8.0. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP64);
    assert_int_equal(gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_TF32);
    assert_int_equal(gpuprobe_matmul_run(ctx, 2, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "7.0"));
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_BF16);
    assert_int_equal(gpuprobe_matmul_run(ctx, 2, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    /* The CPU still works on the same context. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP32);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* The real path on this machine: a context without the seam never lists a
 * CUDA device unless CUDA is usable, so device 1 is NOT_FOUND here. */
static void test_real_cuda_index(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    size_t count = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &count), GPUPROBE_OK);
    gpuprobe_matmul_options *o = small_opts(16, 16, 16, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, count, o, 0, &r);
    assert_int_equal(st, GPUPROBE_ERR_NOT_FOUND);
    assert_null(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- fp16 / bf16 conversions --------------------------------------------- */

static float f32_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void test_f16(void **state)
{
    (void)state;
    static const struct {
        float in;
        uint16_t out;
    } cases[] = {
        {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3c00}, {-2.0f, 0xc000},
        {0.5f, 0x3800}, {65504.0f, 0x7bff}, {-65504.0f, 0xfbff},
        {65519.0f, 0x7bff},       /* below the midpoint to 2^16 */
        {65520.0f, 0x7c00},       /* the midpoint: ties to even = inf */
        {1e6f, 0x7c00}, {-1e6f, 0xfc00},
        {0x1p-14f, 0x0400},       /* smallest normal */
        {0x1p-24f, 0x0001},       /* smallest subnormal */
        {0x1p-25f, 0x0000},       /* half of it: tie to even = 0 */
        {0x1.8p-25f, 0x0001},     /* 0.75 units: up */
        {0x1.8p-24f, 0x0002},     /* 1.5 units: tie to even = 2 */
        {0x1.4p-23f, 0x0002},     /* 2.5 units: tie to even = 2 */
        {0x1.ffcp-15f, 0x0400},   /* 1023.5 units: tie to even = 0x400 */
        {0x1.ff8p-15f, 0x03ff},   /* largest subnormal, 1023 units */
        {0x1p-30f, 0x0000},
        {1.0f + 0x1p-11f, 0x3c00},       /* tie: to even */
        {1.0f + 0x1.8p-10f, 0x3c02},     /* tie: to even (up) */
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01}, /* just above the tie */
        {3.14159265f, 0x4248},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = gp_f32_to_f16(cases[i].in);
        if (h != cases[i].out)
            fail_msg("f16(%a) = 0x%04x, want 0x%04x", (double)cases[i].in, h,
                     cases[i].out);
    }
    assert_int_equal(gp_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(gp_f32_to_f16(-INFINITY), 0xfc00);
    uint16_t n = gp_f32_to_f16(NAN);
    assert_true((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0);
    n = gp_f32_to_f16(f32_of(0x7f800001)); /* signalling NaN, low payload */
    assert_true((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0);
    assert_int_equal(gp_f32_to_f16(f32_of(0x00000001)), 0); /* fp32 subnormal */

    /* Every binary16 value survives the round trip through fp32. */
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = gp_f16_to_f32((uint16_t)h);
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
            assert_true(isnan(f));
            continue;
        }
        if (gp_f32_to_f16(f) != h)
            fail_msg("round trip of 0x%04x gave 0x%04x", h, gp_f32_to_f16(f));
    }
    assert_true(gp_f16_to_f32(0x0001) == 0x1p-24f);
    assert_true(gp_f16_to_f32(0x7bff) == 65504.0f);
    assert_true(gp_f16_to_f32(0xfc00) == -INFINITY);
    assert_true(signbit(gp_f16_to_f32(0x8000)));
}

static void test_bf16(void **state)
{
    (void)state;
    static const struct {
        uint32_t in;
        uint16_t out;
    } cases[] = {
        {0x00000000, 0x0000}, {0x80000000, 0x8000}, {0x3f800000, 0x3f80},
        {0x3f808000, 0x3f80}, /* 1 + 2^-8: tie, to even (down) */
        {0x3f818000, 0x3f82}, /* 1 + 3*2^-8: tie, to even (up) */
        {0x3f808001, 0x3f81}, /* just above the tie */
        {0x3f807fff, 0x3f80}, /* just below */
        {0x7f7fffff, 0x7f80}, /* FLT_MAX rounds up to inf */
        {0x7f7f7fff, 0x7f7f}, /* largest bf16 stays */
        {0xff7fffff, 0xff80},
        {0x7f800000, 0x7f80}, {0xff800000, 0xff80},
        {0x00018000, 0x0002}, /* subnormal tie: to even */
        {0x00010000, 0x0001}, /* subnormal exact */
        {0x00008000, 0x0000}, /* subnormal tie to 0 */
        {0x40490fdb, 0x4049}, /* pi */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = gp_f32_to_bf16(f32_of(cases[i].in));
        if (h != cases[i].out)
            fail_msg("bf16(0x%08x) = 0x%04x, want 0x%04x", cases[i].in, h,
                     cases[i].out);
    }
    uint16_t n = gp_f32_to_bf16(f32_of(0x7f800001)); /* NaN, payload below bf16 */
    assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);
    n = gp_f32_to_bf16(f32_of(0xffc00000));
    assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0 && (n & 0x8000));
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = gp_bf16_to_f32((uint16_t)h);
        if ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) {
            assert_true(isnan(f));
            continue;
        }
        assert_int_equal(gp_f32_to_bf16(f), h);
    }
}

static void test_random_inputs(void **state)
{
    (void)state;
    /* Zero-mean, in (-1, 1), never 0, reproducible, streams differ. */
    enum { N = 20000 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    double *d = malloc(N * sizeof *d);
    uint16_t *h = malloc(N * sizeof *h);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(d);
    assert_non_null(h);
    gp_fill_random(a, GP_ELEM_F32, N, 7, 1);
    gp_fill_random(b, GP_ELEM_F32, N, 7, 1);
    assert_memory_equal(a, b, N * sizeof *a);
    gp_fill_random(b, GP_ELEM_F32, N, 7, 2);
    assert_memory_not_equal(a, b, N * sizeof *a);
    gp_fill_random(d, GP_ELEM_F64, N, 7, 1);
    double sum = 0, sumd = 0;
    for (int i = 0; i < N; i++) {
        assert_true(a[i] > -1.0f && a[i] < 1.0f && a[i] != 0.0f);
        assert_true(d[i] > -1.0 && d[i] < 1.0 && d[i] != 0.0);
        sum += a[i];
        sumd += d[i];
    }
    assert_true(fabs(sum / N) < 0.02 && fabs(sumd / N) < 0.02);
    gp_fill_random(h, GP_ELEM_F16, N, 7, 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(h[i], gp_f32_to_f16(a[i])); /* same stream, rounded */
    gp_fill_random(h, GP_ELEM_BF16, N, 7, 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(h[i], gp_f32_to_bf16(a[i]));
    free(a);
    free(b);
    free(d);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_f16),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_random_inputs),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_peaks),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_result_figures),
        cmocka_unit_test(test_runs_and_budget),
        cmocka_unit_test(test_verify_catches),
        cmocka_unit_test(test_verify_catches_tf32),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_host_memory_limit),
        cmocka_unit_test(test_cgroup_room_counts_openblas),
        cmocka_unit_test(test_threads_restored),
        cmocka_unit_test(test_gpu_request_without_gpu),
        cmocka_unit_test(test_real_cuda_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
