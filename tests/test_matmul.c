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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuprobe.h"
#include "unit_check.h"
#include "matmul_backend.h"
#include "cpu_bf16.h"
#include "sysroot_util.h"

/* ---- helpers ------------------------------------------------------------ */

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

/* A and B as the protocol seeds them (seed 42; streams 1 and 2), in e. */
static void seeded_inputs(gp_elem e, int64_t m, int64_t n, int64_t k, void **a, void **b)
{
    size_t es = gp_elem_size(e);
    *a = malloc((size_t)(m * k) * es);
    *b = malloc((size_t)(k * n) * es);
    assert_non_null(*a);
    assert_non_null(*b);
    gp_fill_random(*a, e, (size_t)(m * k), 42, 1);
    gp_fill_random(*b, e, (size_t)(k * n), 42, 2);
}

/* C[i][j] of A (m x k) B (k x n) in double, and the sum of the products'
 * magnitudes in *mag. */
static double naive_entry(const void *a, const void *b, gp_elem e, int64_t n, int64_t k,
                          int64_t i, int64_t j, double *mag)
{
    double ref = 0;
    *mag = 0;
    for (int64_t p = 0; p < k; p++) {
        double x = gp_elem_get(a, e, (size_t)(i * k + p)) * gp_elem_get(b, e, (size_t)(p * n + j));
        ref += x;
        *mag += fabs(x);
    }
    return ref;
}

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
    void *a = NULL, *b = NULL;
    seeded_inputs(e, m, n, k, &a, &b);
    const int64_t pick[][2] = {{0, 0}, {m - 1, n - 1}, {m / 2, n / 3}, {m - 1, 0}};
    for (size_t t = 0; t < sizeof pick / sizeof pick[0]; t++) {
        int64_t i = pick[t][0], j = pick[t][1];
        double mag = 0, ref = naive_entry(a, b, e, n, k, i, j, &mag);
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

/* ---- bf16 on the CPU: the AMX gemm (cpu_bf16.c) --------------------------- */

/* Every entry of C against a double-precision product of the same bf16
 * inputs. The products of two bf16 are exact in fp32; only the fp32 sums
 * round, by at most about k units of 2^-24 of the sum of magnitudes. */
static void check_bf16_all(gpuprobe_context *ctx, int kernel, int64_t m, int64_t n, int64_t k,
                           int64_t threads)
{
    gpuprobe_matmul_options *o = small_opts(m, n, k, GPUPROBE_DTYPE_BF16);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, threads),
                     GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    seen_c = NULL;
    gp_test_matmul_corrupt = observe_c;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    gp_test_matmul_corrupt = NULL;
    if (st != GPUPROBE_OK)
        fail_msg("%s %lldx%lldx%lld bf16, %lld threads: %s: %s", gp_bf16_kernel_name(kernel),
                 (long long)m, (long long)n, (long long)k, (long long)threads,
                 gpuprobe_status_name(st), gpuprobe_last_error(ctx));
    assert_int_equal(get_i(r, GPUPROBE_METRIC_VERIFIED), 1);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_DTYPE), GPUPROBE_DTYPE_BF16);
    const char *backend = NULL;
    assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_BACKEND, &backend),
                     GPUPROBE_OK);
    assert_non_null(strstr(backend, gp_bf16_kernel_name(kernel)));
    int64_t used = get_i(r, GPUPROBE_METRIC_THREADS);
    assert_int_equal(used, gp_bf16_gemm_threads((size_t)threads, (size_t)m, (size_t)n, (size_t)k));
    assert_non_null(seen_c);
    assert_int_equal(seen_count, (size_t)(m * n));
    void *a = NULL, *b = NULL;
    seeded_inputs(GP_ELEM_BF16, m, n, k, &a, &b);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double mag = 0, ref = naive_entry(a, b, GP_ELEM_BF16, n, k, i, j, &mag);
            double got = seen_c[i * n + j];
            if (!(fabs(got - ref) <= (double)(k + 2) * 0x1p-23 * mag))
                fail_msg("%s %lldx%lldx%lld bf16, %lld threads: C[%lld][%lld] = %.9g, "
                         "naive %.9g", gp_bf16_kernel_name(kernel), (long long)m, (long long)n, (long long)k,
                         (long long)threads, (long long)i, (long long)j, got, ref);
        }
    free(a);
    free(b);
    free(seen_c);
    seen_c = NULL;
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
}

/* The shapes cross every edge of the blocking: the 16-row and 32-column
 * tiles, 32 of k per step, KC = 512 of k per slice, NC = 256 columns per
 * packed block, MC = 1024 rows, and the threads' split of the columns; the
 * AVX512 kernel's eight rows at a time too. Each kernel the CPU runs is
 * checked (the test seam chooses it), AMX preferred where both run. */
static void test_cpu_bf16(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    char why[160];
    const int chosen = gp_cpu_bf16(ctx, why, sizeof why);
    if (!chosen) {
        gpuprobe_matmul_options *o = small_opts(8, 8, 8, GPUPROBE_DTYPE_BF16);
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
        assert_null(r);
        assert_non_null(strstr(gpuprobe_last_error(ctx), why));
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
        print_message("bf16 on this CPU: %s; the kernel is not run here\n", why);
        skip();
    }
    static const int64_t shapes[][4] = {
        {1, 1, 1, 1},      {1, 1, 1, 2},     {16, 16, 32, 1},   {17, 15, 31, 2},
        {32, 32, 32, 2},   {33, 33, 33, 2},  {31, 65, 95, 3},   {64, 64, 64, 1},
        {100, 37, 129, 2}, {3, 300, 513, 2}, {47, 600, 1030, 3}, {1100, 40, 70, 2},
        {1030, 70, 33, 1}, {5, 1, 700, 2},   {2, 97, 2, 7},     {64, 330, 600, 4},
        {9, 40, 64, 1},    {24, 32, 2, 1},
    };
    static const int kernels[] = {GP_BF16_AMX, GP_BF16_AVX512};
    int ran = 0;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        gp_test_bf16_kernel = kernels[i];
        const int got = gp_cpu_bf16(ctx, why, sizeof why);
        if (!got) {
            gp_test_bf16_kernel = 0;
            assert_int_not_equal(kernels[i], chosen);
            assert_true(why[0] != '\0');
            print_message("the %s kernel does not run here: %s\n",
                          gp_bf16_kernel_name(kernels[i]), why);
            continue;
        }
        assert_int_equal(got, kernels[i]);
        if (ran == 0) /* the first that runs is the one chosen */
            assert_int_equal(chosen, got);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            check_bf16_all(ctx, got, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
        gp_test_bf16_kernel = 0;
        ran++;
    }
    assert_true(ran >= 1);
    gpuprobe_context_destroy(ctx);
}

/* The threads a product uses: as asked, at most 256, at most one per 32
 * columns, one under 4 MFLOP. */
static void test_cpu_bf16_threads(void **state)
{
    (void)state;
    assert_int_equal(gp_bf16_gemm_threads(2, 64, 330, 600), 2);
    assert_int_equal(gp_bf16_gemm_threads(16, 64, 330, 600), 11); /* 11 blocks of 32 */
    assert_int_equal(gp_bf16_gemm_threads(1000, 4096, 16384, 4096), 256);
    assert_int_equal(gp_bf16_gemm_threads(1000, 4096, 1000, 4096), 32);
    assert_int_equal(gp_bf16_gemm_threads(8, 100, 100, 100), 1); /* 2 MFLOP */
    assert_int_equal(gp_bf16_gemm_threads(8, 100, 100, 200), 4); /* exactly 4 MFLOP */
    assert_int_equal(gp_bf16_gemm_threads(1, 4096, 4096, 4096), 1);
    /* the cost grows with the threads used and holds the packing buffers */
    assert_true(gp_bf16_gemm_cost(2) == 2 * gp_bf16_gemm_cost(1));
    assert_true(gp_bf16_gemm_cost(1) > (uint64_t)1024 * 512 * 2);
}

/* GPUPROBE_CPU_AMX off (any of the switch's words, read when the context
 * is created) turns the kernel off: bf16 on the CPU is refused, with the
 * reason, and nothing else changes; a context created before keeps its
 * reading; a value that is no switch word is the environment's error. */
static void test_cpu_bf16_off(void **state)
{
    (void)state;
    gpuprobe_context *before = new_ctx();
    char why[160];
    static const char *const offs[] = {"0", "off", "No", "DISABLED"};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        assert_int_equal(setenv("GPUPROBE_CPU_AMX", offs[i], 1), 0);
        gpuprobe_context *ctx = new_ctx();
        unsetenv("GPUPROBE_CPU_AMX");
        gpuprobe_matmul_options *o = small_opts(8, 8, 8, GPUPROBE_DTYPE_BF16);
        gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
        assert_null(r);
        assert_non_null(strstr(gpuprobe_last_error(ctx), "GPUPROBE_CPU_AMX turns it off"));
        assert_non_null(strstr(gpuprobe_last_error(ctx), "fp32 and fp64"));
        assert_int_equal(gp_cpu_bf16(ctx, why, sizeof why), 0);
        assert_string_equal(why, "GPUPROBE_CPU_AMX turns it off");
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP32),
                         GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
    /* the context created before the variable was set did not see it */
    assert_true(gp_cpu_bf16(before, why, sizeof why) == 0 ? strstr(why, "GPUPROBE") == NULL : 1);
    gpuprobe_context_destroy(before);
    /* "on" leaves it on; a word that is neither is refused */
    assert_int_equal(setenv("GPUPROBE_CPU_AMX", "on", 1), 0);
    gpuprobe_context *ctx = new_ctx();
    assert_true(gp_cpu_bf16(ctx, why, sizeof why) == 0 ? strstr(why, "GPUPROBE") == NULL : 1);
    gpuprobe_context_destroy(ctx);
    assert_int_equal(setenv("GPUPROBE_CPU_AMX", "maybe", 1), 0);
    ctx = new_ctx();
    unsetenv("GPUPROBE_CPU_AMX");
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "GPUPROBE_CPU_AMX=\"maybe\""));
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
    /* The device's own name. */
    const char *dev_name = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &dev_name),
                     GPUPROBE_OK);
    assert_string_equal(get_s(r, GPUPROBE_METRIC_DEVICE_NAME), dev_name);
    /* Each metric has exactly one getter: doubles 0-12, 26 and 27, strings
     * 20-23, the rest ints. */
    for (int m = -1; m <= 30; m++) {
        double dv;
        int64_t iv;
        const char *sv;
        int is_d = (m >= 0 && m <= 12) || m == 26 || m == 27, is_s = m >= 20 && m <= 23;
        int is_i = (m >= 13 && m <= 19) || m == 24 || m == 25 || m == 28 || m == 29;
        if ((gpuprobe_matmul_result_get_double(r, (gpuprobe_matmul_metric)m, &dv) ==
             GPUPROBE_OK) != is_d ||
            (gpuprobe_matmul_result_get_int(r, (gpuprobe_matmul_metric)m, &iv) ==
             GPUPROBE_OK) != is_i ||
            (gpuprobe_matmul_result_get_string(r, (gpuprobe_matmul_metric)m, &sv) ==
             GPUPROBE_OK) != is_s)
            fail_msg("metric %d: wrong getter accepted or right one refused", m);
    }
    /* Wrong getter types and unknown metrics. */
    double d;
    int64_t i;
    const char *s;
    assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_RUNS, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_GFLOPS, &i), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_M, &s), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_int(r, (gpuprobe_matmul_metric)30, &i), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_double(r, (gpuprobe_matmul_metric)30, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_double(r, (gpuprobe_matmul_metric)-1, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_double(NULL, GPUPROBE_METRIC_IQR_S, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_WARMUP_S, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
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
    /* A budget keeps it going past MIN, up to MAX (single calls of a few
     * microseconds: 40 of them take far less than the budget, even on a
     * busy machine). */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 40);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 200);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 1);
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

/* The default timing of a call of microseconds: runs of a batch of calls
 * (each run at least about 2 ms), as many runs as make 250 ms of timed
 * calls (no cap on their number); the figures per call. BATCH set:
 * exactly that. (The exact rule, where time is exact: scenario.matmul's
 * autorange_on_a_gpu, and the scripted clock below.) */
static void test_autorange(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 8), GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    /* A call preempted during the calibration can make it choose single
     * calls once; three runs in a row cannot all be so unlucky. */
    int64_t batch = 0;
    for (int tries = 0; tries < 3 && batch < 2; tries++) {
        gpuprobe_matmul_result_destroy(r);
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
        batch = get_i(r, GPUPROBE_METRIC_BATCH);
    }
    int64_t runs = get_i(r, GPUPROBE_METRIC_RUNS);
    double mean = get_d(r, GPUPROBE_METRIC_MEAN_S), max = get_d(r, GPUPROBE_METRIC_MAX_S);
    double timed = mean * (double)batch * (double)runs; /* the runs' blocks, added */
    print_message("8x8x8: %lld runs of %lld calls, %.3g s a call, %.3f s timed\n",
                  (long long)runs, (long long)batch, get_d(r, GPUPROBE_METRIC_MEDIAN_S), timed);
    assert_true(batch >= 2);                 /* an 8^3 call is far below 2 ms */
    assert_true(runs >= 5);
    /* Stopped once 250 ms were timed, and not a run later. */
    assert_true(timed >= 0.25 * (1 - 1e-9));
    assert_true(timed - max * (double)batch < 0.25);
    /* The warm-up searched for the steady state (its bound, exactly: the
     * scripted clock below), and is part of the setup. */
    int64_t steady = get_i(r, GPUPROBE_METRIC_STEADY);
    assert_true(steady == 0 || steady == 1);
    assert_true(get_i(r, GPUPROBE_METRIC_WARMUP_RUNS) >= (steady == 1 ? 2 : 0));
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) > 0);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) < get_d(r, GPUPROBE_METRIC_SETUP_S));
    assert_int_equal(get_i(r, GPUPROBE_METRIC_VERIFIED), 1);
    gpuprobe_matmul_result_destroy(r);

    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 4), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_BATCH), 1);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 4);
    gpuprobe_matmul_result_destroy(r);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 33), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_BATCH), 33);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 4);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- the protocol on a scripted clock ----------------------------------- */

/* A backend whose gemm takes no time and whose clock is a script: the
 * c-th call (from 0, over the whole run) lasts call_s(c) seconds, and a
 * block's time is the sum of its calls'. run() can fail at a given block.
 * It counts prepare() and release(), and every block. */
static struct {
    double (*call_s)(uint64_t c);
    uint64_t calls;          /* gemm calls so far */
    size_t blocks;           /* run() calls so far */
    size_t fail_block;       /* run() number that fails (1-based; 0 none) */
    int prepared, released;
} script;

static gpuprobe_status script_prepare(gpuprobe_context *ctx, gp_mm_job *job,
                                      gp_mm_host *host, void **state)
{
    (void)ctx;
    void *a = malloc(job->a_bytes), *b = malloc(job->b_bytes), *c = malloc(job->c_bytes);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    *host = (gp_mm_host){a, b, c, GP_ELEM_F32, GP_ELEM_F32, GP_ELEM_F32};
    void **bufs = malloc(3 * sizeof *bufs);
    assert_non_null(bufs);
    bufs[0] = a;
    bufs[1] = b;
    bufs[2] = c;
    job->threads = 1;
    gp_strlcpy(job->backend, "scripted", sizeof job->backend);
    script.prepared++;
    *state = bufs;
    return GPUPROBE_OK;
}

static gpuprobe_status script_run(gpuprobe_context *ctx, void *state, size_t reps,
                                  double *seconds)
{
    (void)state;
    if (++script.blocks == script.fail_block)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA, "scripted failure at block %zu", script.blocks);
    double s = 0.0;
    for (size_t i = 0; i < reps; i++)
        s += script.call_s(script.calls++);
    *seconds = s;
    return GPUPROBE_OK;
}

static gpuprobe_status script_release(gpuprobe_context *ctx, void *state, gpuprobe_status st)
{
    (void)ctx;
    void **bufs = state;
    for (int i = 0; i < 3; i++)
        free(bufs[i]);
    free(bufs);
    script.released++;
    return st;
}

static const gp_mm_backend script_backend = {
    .prepare = script_prepare, .run = script_run, .release = script_release,
};

/* Options for a 4 x 4 x 4 "gemm" on the scripted backend: blocks of
 * `batch` calls (0: automatic), no verification (the scripted gemm writes
 * nothing), the rest the defaults. */
static gpuprobe_matmul_options *script_opts(int64_t batch)
{
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 4), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, batch), GPUPROBE_OK);
    return o;
}

/* Run o (then destroyed) on the scripted backend with the clock call_s and
 * run() failing at block fail_block (0: never), in a new context; want:
 * the status, and, when msg is not NULL, the message. Whatever happened,
 * the backend was released once. The result (NULL on failure) to read
 * and destroy. */
static gpuprobe_matmul_result *run_scripted(double (*call_s)(uint64_t), size_t fail_block,
                                            gpuprobe_matmul_options *o, gpuprobe_status want,
                                            const char *msg)
{
    memset(&script, 0, sizeof script);
    script.call_s = call_s;
    script.fail_block = fail_block;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&o;
    gp_test_matmul_backend = &script_backend;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    gp_test_matmul_backend = NULL;
    if (st != want)
        fail_msg("scripted run: %s (%s), want %s", gpuprobe_status_name(st),
                 gpuprobe_last_error(ctx), gpuprobe_status_name(want));
    if (st != GPUPROBE_OK)
        assert_null(r);
    if (msg)
        assert_string_equal(gpuprobe_last_error(ctx), msg);
    assert_int_equal(script.prepared, 1);
    assert_int_equal(script.released, 1);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    return r;
}

/* A run on the scripted backend: one warm-up call, blocks of `batch`
 * calls, the warm-up's bound and the budget given. */
static gpuprobe_matmul_result *scripted(double (*call_s)(uint64_t), int64_t batch,
                                        int64_t warmup_ms, int64_t budget_ms,
                                        gpuprobe_status want)
{
    gpuprobe_matmul_options *o = script_opts(batch);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS, warmup_ms),
                     GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, budget_ms),
                     GPUPROBE_OK);
    return run_scripted(call_s, 0, o, want, NULL);
}

/* How the warm-up ended: STEADY and WARMUP_RUNS. */
static void check_warmup(const gpuprobe_matmul_result *r, int64_t steady, int64_t runs)
{
    assert_int_equal(get_i(r, GPUPROBE_METRIC_STEADY), steady);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_WARMUP_RUNS), runs);
}

/* A slow rise to the steady state: the warm-up call (call 0) of 8 ms,
 * then, in blocks of 10 calls, blocks 0-29 (calls 1-300) of 1.5 - 0.01 b
 * ms a call, from 15 ms a block down to 12.1, and 1.2 ms a call from
 * block 30 on. Each block is within 1% of the one before: two blocks in a
 * row would agree at once, during the rise. */
static double creeping(uint64_t c)
{
    if (c == 0)
        return 0.008;
    uint64_t b = (c - 1) / 10;
    return (b < 30 ? 1.5 - 0.01 * (double)b : 1.2) / 1000.0;
}

/* Blocks of 10 calls that alternate between 1 and 1.5 ms a call after the
 * 1 ms warm-up call: no two in a row agree. */
static double wobbling(uint64_t c)
{
    if (c == 0)
        return 0.001;
    return ((c - 1) / 10 % 2 ? 1.5 : 1.0) / 1000.0;
}

/* The first five calls (the warm-up call and the calibration's 1 + 3) of
 * 2^-10 s, the rest eight times faster. */
static double quickening(uint64_t c)
{
    return c < 5 ? 1.0 / 1024.0 : 1.0 / 8192.0;
}

/* 2^-10 s a call, exactly (sums of it are exact). */
static double steady_call(uint64_t c)
{
    (void)c;
    return 1.0 / 1024.0;
}

/* Warm-up stops at the first two windows in a row whose medians agree
 * within 2%, a window being the blocks that last 50 ms or more together.
 * On the slow rise: six windows of four blocks (59.4 ms down to 51.4,
 * medians 14.85 to 12.85 ms, each 3% or more below the last), then blocks
 * 24-28 (62 ms, median 12.4), 29-33 (60.1 ms, median 12: 3.3% below) and
 * 34-38 (median 12: they agree). 39 blocks, 8 ms + 514.5 ms of warm-up;
 * the timed runs begin at block 39, so none of the rise shows in them.
 * Comparing block with block would have stopped after two, and timed
 * blocks 2-6 (1.46 ms a call). */
static void test_steady_when_windows_agree(void **state)
{
    (void)state;
    gpuprobe_matmul_result *r = scripted(creeping, 10, 1000, 0, GPUPROBE_OK);
    check_warmup(r, 1, 39);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_BATCH), 10);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 5); /* MIN_RUNS, no budget */
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_WARMUP_S) - 0.5225) < 1e-12);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_MEDIAN_S) - 0.0012) < 1e-15);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_MAX_S) - 0.0012) < 1e-15);
    assert_true(get_d(r, GPUPROBE_METRIC_IQR_S) < 1e-15);
    /* 1 + 39 x 10 + 5 x 10 calls in 1 + 39 + 5 blocks. */
    assert_int_equal(script.calls, 1 + 390 + 50);
    assert_int_equal(script.blocks, 45);
    gpuprobe_matmul_result_destroy(r);
    /* Bounded at 200 ms: the rise is still on when the bound comes. 13
     * blocks make 8 + 187.2 ms; a fourteenth as long as the thirteenth
     * (13.8 ms) would end past the bound. Not steady, and it shows: the
     * timed blocks 13-17 are 1.37 to 1.33 ms a call (median 1.35). */
    r = scripted(creeping, 10, 200, 0, GPUPROBE_OK);
    check_warmup(r, 0, 13);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_WARMUP_S) - 0.1952) < 1e-12);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_MEDIAN_S) - 0.00135) < 1e-12);
    gpuprobe_matmul_result_destroy(r);
}

/* 2^-20 s a call (about 1 us). */
static double quick_call(uint64_t c)
{
    (void)c;
    return 1.0 / 1048576.0;
}

/* A window's length. A block of 50 ms or more is a window of its own: the
 * rule is then two blocks in a row within 2%. Blocks of 64 calls of
 * 2^-10 s (62.5 ms): the first two agree. A window holds 256 blocks at
 * most: blocks of one 2^-20 s call (a fixed batch) make windows of 256
 * (0.24 ms), and two of them agree after 512 blocks. */
static void test_window_length(void **state)
{
    (void)state;
    gpuprobe_matmul_result *r = scripted(steady_call, 64, 1000, 0, GPUPROBE_OK);
    check_warmup(r, 1, 2);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) == 129.0 / 1024.0);
    gpuprobe_matmul_result_destroy(r);
    r = scripted(quick_call, 1, 1000, 0, GPUPROBE_OK);
    check_warmup(r, 1, 512);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) == 513.0 / 1048576.0);
    assert_int_equal(script.calls, 1 + 512 + 5);
    gpuprobe_matmul_result_destroy(r);
}

/* Blocks that never agree: the warm-up ends at its bound. With 50 ms, the
 * 1 ms warm-up call (so room for two blocks of 10 ms) and blocks of 10,
 * 15, 10, 15 ms: 36 ms after three blocks, room for one more as long as
 * the last (10 ms), which lasts 15 and ends past the bound (51 ms); a
 * fifth as long would end at 66: none. */
static void test_warmup_bound(void **state)
{
    (void)state;
    gpuprobe_matmul_result *r = scripted(wobbling, 10, 50, 0, GPUPROBE_OK);
    check_warmup(r, 0, 4);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_WARMUP_S) - 0.051) < 1e-12);
    gpuprobe_matmul_result_destroy(r);
    /* A bound of 0: no search at all. */
    r = scripted(wobbling, 10, 0, 0, GPUPROBE_OK);
    check_warmup(r, -1, 0);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) == 0.001);
    assert_int_equal(script.blocks, 1 + 5);
    gpuprobe_matmul_result_destroy(r);
    /* A warm-up call already past the bound: no search block either. */
    r = scripted(creeping, 10, 8, 0, GPUPROBE_OK);
    check_warmup(r, 0, 0);
    gpuprobe_matmul_result_destroy(r);
    /* The search starts only with room for two blocks, as long as the
     * warm-up call's rate says: a 2^-10 s call and blocks of 4, so
     * 2^-10 + 2 x 2^-8 s = 8.79 ms. A bound of 8 ms: no search; of 9 ms:
     * two blocks, too short for a window: not steady. */
    r = scripted(steady_call, 4, 8, 0, GPUPROBE_OK);
    check_warmup(r, 0, 0);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) == 1.0 / 1024.0);
    gpuprobe_matmul_result_destroy(r);
    r = scripted(steady_call, 4, 9, 0, GPUPROBE_OK);
    check_warmup(r, 0, 2);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) == 9.0 / 1024.0);
    gpuprobe_matmul_result_destroy(r);
}

/* The automatic batch is chosen again from the steady rate. Calibration
 * on the slow first calls: 1 call (2^-10 s, short), then
 * ceil(1.25 x 2 ms / 2^-10 s) = 3 (2.9 ms): a batch of 3. The search:
 * blocks of 3 fast calls (0.37 ms), two windows of 137 (50.2 ms), which
 * agree; at that rate a block of 2 ms is ceil(1.25 x 2 ms / 2^-13 s) = 21
 * calls. Five timed runs of 21: 1 + 1 + 3 + 274 x 3 + 105 calls. A fixed
 * batch is kept. */
static void test_batch_from_steady_rate(void **state)
{
    (void)state;
    gpuprobe_matmul_result *r = scripted(quickening, 0, 1000, 0, GPUPROBE_OK);
    check_warmup(r, 1, 274);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_BATCH), 21);
    assert_true(get_d(r, GPUPROBE_METRIC_MEDIAN_S) == 1.0 / 8192.0);
    assert_int_equal(script.calls, 1 + 1 + 3 + 274 * 3 + 105);
    gpuprobe_matmul_result_destroy(r);
    r = scripted(quickening, 3, 1000, 0, GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_BATCH), 3);
    gpuprobe_matmul_result_destroy(r);
}

/* No cap on the runs by default: the budget ends them. Blocks of 4 calls
 * of 2^-10 s: 2^-8 s a block, so 250 ms (64 x 2^-8 s exactly) takes 64
 * blocks, and 2000 ms 512 (past the 128 times first allocated: grown).
 * The search before them: two windows of 13 blocks (50.8 ms). MAX_RUNS
 * set: it ends them first. */
static void test_budget_ends_runs(void **state)
{
    (void)state;
    gpuprobe_matmul_result *r = scripted(steady_call, 4, 1000, 250, GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 64);
    check_warmup(r, 1, 26);
    gpuprobe_matmul_result_destroy(r);
    r = scripted(steady_call, 4, 1000, 2000, GPUPROBE_OK);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 512);
    assert_true(get_d(r, GPUPROBE_METRIC_MEDIAN_S) == 1.0 / 1024.0);
    gpuprobe_matmul_result_destroy(r);

    gpuprobe_matmul_options *o = script_opts(4);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 40);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 2000);
    r = run_scripted(steady_call, 0, o, GPUPROBE_OK, NULL);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 40);
    gpuprobe_matmul_result_destroy(r);
}

/* The spread: the interquartile range of the runs, per call. Runs of 1,
 * 2, 3, 4, 1, 2, 3, 4 ms (one call each): sorted 1 1 2 2 3 3 4 4, the
 * quartiles at 1.75 and 3.25 ms. */
static double cycling(uint64_t c)
{
    return (double)(c % 4 + 1) / 1000.0;
}

static void test_spread(void **state)
{
    (void)state;
    gpuprobe_matmul_options *o = script_opts(1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP, 0);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS, 0);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 8);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 0);
    gpuprobe_matmul_result *r = run_scripted(cycling, 0, o, GPUPROBE_OK, NULL);
    assert_int_equal(get_i(r, GPUPROBE_METRIC_RUNS), 8);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_IQR_S) - 0.0015) < 1e-15);
    assert_true(fabs(get_d(r, GPUPROBE_METRIC_MEDIAN_S) - 0.0025) < 1e-15);
    assert_true(get_d(r, GPUPROBE_METRIC_WARMUP_S) == 0.0);
    gpuprobe_matmul_result_destroy(r);
}

/* A failure in any block (warm-up call, search, timed run) is the run's
 * status; the backend is released once and no result is made. */
static void test_failure_in_each_phase(void **state)
{
    (void)state;
    /* creeping with blocks of 10: run() 1 is the warm-up call, 2-40 the
     * search, 41-45 the timed runs. */
    for (size_t fail = 1; fail <= 45; fail++) {
        gpuprobe_matmul_options *o = script_opts(10);
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 0);
        char want[64];
        snprintf(want, sizeof want, "scripted failure at block %zu", fail);
        assert_null(run_scripted(creeping, fail, o, GPUPROBE_ERR_CUDA, want));
        assert_int_equal(script.blocks, fail);
    }
}

/* ---- options ------------------------------------------------------------- */

static void test_options(void **state)
{
    (void)state;
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    static const int64_t defaults[15] = {5000, 5000, 5000, GPUPROBE_DTYPE_FP32,
                                         1, 5, 0, 250, 1, 1, 42, 0, 256, 0, 1000};
    for (int p = 0; p < 15; p++) {
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
    for (int p = 0; p < 15; p++) {
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
    /* The bounds themselves, as shipped (the loop above reads them back
     * from the function it tests, so it cannot see them change). */
    static const int64_t bounds[15][2] = {
        {1, INT32_MAX}, {1, INT32_MAX}, {1, INT32_MAX},  /* M, N, K */
        {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_BF16},      /* DTYPE */
        {0, 1000}, {1, 10000}, {0, 10000},               /* WARMUP, MIN/MAX_RUNS */
        {0, 3600000}, {0, 1}, {0, 1},                    /* BUDGET_MS, TRANSFERS, VERIFY */
        {0, INT64_MAX}, {0, 1024}, {1, 1 << 20},         /* SEED, CPU_THREADS, SAMPLES */
        {0, 1 << 20}, {0, 3600000},                      /* BATCH, WARMUP_MS */
    };
    int64_t lo, hi;
    for (int p = 0; p < 15; p++) {
        assert_int_equal(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)p, &lo, &hi),
                         GPUPROBE_OK);
        if (lo != bounds[p][0] || hi != bounds[p][1])
            fail_msg("parameter %d: bounds [%lld, %lld], want [%lld, %lld]", p,
                     (long long)lo, (long long)hi, (long long)bounds[p][0],
                     (long long)bounds[p][1]);
    }
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP8),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, 99),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* Unknown parameters. */
    assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)15, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)-1, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)15, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)15, &lo, &hi), GPUPROBE_ERR_INVALID_ARGUMENT);
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

/* An output of at most verify_samples entries is checked in full: a
 * single wrong entry is found wherever it is, and reported as the worst. */
static void test_small_output_checked_in_full(void **state)
{
    (void)state;
    enum { M = 8, N = 8, K = 5 };
    float a[M * K], b[K * N], c[M * N], bad[M * N];
    double exact[M * N];
    gp_fill_random(a, GP_ELEM_F32, M * K, 5, 1);
    gp_fill_random(b, GP_ELEM_F32, K * N, 5, 2);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p < K; p++)
                s += (double)a[i * K + p] * (double)b[p * N + j];
            exact[i * N + j] = s;
            c[i * N + j] = (float)s;
        }
    gp_mm_job job;
    memset(&job, 0, sizeof job);
    job.m = M;
    job.n = N;
    job.k = K;
    job.dtype = GPUPROBE_DTYPE_FP32;
    job.seed = 42;
    job.verify_samples = M * N; /* exactly the output's size */
    gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, c, GP_ELEM_F32);
    assert_int_equal(job.verified, 1);
    assert_true(job.max_error <= job.tolerance);
    for (int t = 0; t < M * N; t++) {
        memcpy(bad, c, sizeof bad);
        bad[t] += 0.25f;
        gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, bad, GP_ELEM_F32);
        if (job.verified != 0 || job.worst_i != t / N || job.worst_j != t % N)
            fail_msg("C[%d][%d] wrong: verified %d, worst C[%lld][%lld]", t / N, t % N,
                     job.verified, (long long)job.worst_i, (long long)job.worst_j);
        assert_true(job.worst_value == (double)bad[t]);
        assert_true(job.worst_ref == exact[t]);
        assert_true(job.max_error > job.tolerance);
    }
}

/* Sampled verification (more entries than samples) looks beyond the
 * corners, over every row and column: an output wrong everywhere but in
 * one row, or in one column, fails. */
static void test_samples_spread(void **state)
{
    (void)state;
    enum { M = 40, N = 30, K = 4 };
    static float a[M * K], b[K * N], c[M * N], bad[M * N];
    gp_fill_random(a, GP_ELEM_F32, M * K, 9, 1);
    gp_fill_random(b, GP_ELEM_F32, K * N, 9, 2);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p < K; p++)
                s += (double)a[i * K + p] * (double)b[p * N + j];
            c[i * N + j] = (float)s;
        }
    gp_mm_job job;
    memset(&job, 0, sizeof job);
    job.m = M;
    job.n = N;
    job.k = K;
    job.dtype = GPUPROBE_DTYPE_FP32;
    job.seed = 42;
    job.verify_samples = 64;
    gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, c, GP_ELEM_F32);
    assert_int_equal(job.verified, 1);
    static const int keep_row[] = {0, M - 1, -1, -1}, keep_col[] = {-1, -1, 0, N - 1};
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                bad[i * N + j] = c[i * N + j] +
                                 (i == keep_row[t] || j == keep_col[t] ? 0.0f : 1.0f);
        gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, bad, GP_ELEM_F32);
        if (job.verified != 0)
            fail_msg("an output right only in row %d / column %d passed", keep_row[t],
                     keep_col[t]);
    }
}

/* Sampled verification checks VERIFY_SAMPLES entries, the four corners
 * first: with 4 samples exactly the corners are looked at (an output wrong
 * everywhere else passes), and a single wrong corner fails, named as the
 * worst entry; a check with no error names the first entry. */
static void test_samples_corners(void **state)
{
    (void)state;
    enum { M = 9, N = 7, K = 2 };
    static float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = 1.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = 1.0f;
    gp_mm_job job;
    memset(&job, 0, sizeof job);
    job.m = M;
    job.n = N;
    job.k = K;
    job.dtype = GPUPROBE_DTYPE_FP32;
    job.seed = 42;
    job.verify_samples = 4;
    static const int ci[4] = {0, 0, M - 1, M - 1}, cj[4] = {0, N - 1, 0, N - 1};
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            c[i * N + j] = (i == 0 || i == M - 1) && (j == 0 || j == N - 1) ? (float)K : 1e3f;
    gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, c, GP_ELEM_F32);
    assert_int_equal(job.verified, 1);
    assert_true(job.max_error == 0.0);
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < M * N; i++)
            c[i] = (float)K;
        c[ci[t] * N + cj[t]] = (float)K + 1.0f;
        gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, c, GP_ELEM_F32);
        if (job.verified != 0)
            fail_msg("a wrong C[%d][%d] passed", ci[t], cj[t]);
        assert_int_equal(job.worst_i, ci[t]);
        assert_int_equal(job.worst_j, cj[t]);
    }
    /* A check where every sample is exact names the first one looked at,
     * C[0][0], with its value and reference: not the worst entry of the
     * check before, on the same job. */
    for (int i = 0; i < M * N; i++)
        c[i] = (float)K;
    gp_mm_verify(&job, a, GP_ELEM_F32, b, GP_ELEM_F32, c, GP_ELEM_F32);
    assert_int_equal(job.verified, 1);
    assert_true(job.max_error == 0.0);
    assert_int_equal(job.worst_i, 0);
    assert_int_equal(job.worst_j, 0);
    assert_true(job.worst_value == (double)K);
    assert_true(job.worst_ref == (double)K);
}

/* The tolerance is the documented bound, exactly: fp32/fp64 u (2 + min(k,
 * 8R)) with R the spread of the partial sums (none counts as 0); tf32
 * 2^-9 + 2^-20 for its rounded inputs plus 2^-20 (8 + sqrt(k)); fp16/bf16
 * 2^-20 (8 + sqrt(k)); k < 1 counts as 1. */
static void test_tolerance_formula(void **state)
{
    (void)state;
    static const int64_t ks[] = {-3, 0, 1, 2, 64, 5000, 1 << 20};
    static const double spreads[] = {-1.0, 0.0, 0.5, 3.0, 1e9};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        double kk = (double)(ks[i] > 0 ? ks[i] : 1);
        double root = sqrt(kk);
        for (size_t j = 0; j < sizeof spreads / sizeof spreads[0]; j++) {
            double r = spreads[j];
            double p = 8.0 * (r > 0 ? r : 0.0);
            double m = p < kk ? p : kk;
            assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP64, ks[i], r) == 0x1p-52 * (2.0 + m));
            assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, ks[i], r) == 0x1p-24 * (2.0 + m));
            assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_TF32, ks[i], r) ==
                        2 * 0x1p-10 + 0x1p-20 + 0x1p-20 * (8.0 + root));
            assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP16, ks[i], r) == 0x1p-20 * (8.0 + root));
            assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_BF16, ks[i], r) == 0x1p-20 * (8.0 + root));
            assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP8, ks[i], r) == 0);
            assert_true(gp_matmul_tolerance((gpuprobe_dtype)99, ks[i], r) == 0);
        }
    }
    /* Pinned values: fp32 at k = 5000 with R = 3 is u (2 + 24). */
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, 5000, 3.0) == 0x1p-24 * 26.0);
    assert_true(gp_matmul_tolerance(GPUPROBE_DTYPE_FP32, 4, 3.0) == 0x1p-24 * 6.0);
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

/* FLOP per clock per SM for every compute capability the library knows,
 * from the sources cited in lib/matmul.c (CUDA C++ Programming Guide and
 * the architecture whitepapers): fp32, tf32, fp16, bf16. */
static const struct {
    int major, minor;
    double fp32, tf32, fp16, bf16;
} sm_peaks[] = {
    {7, 0, 128, 0, 1024, 0},          /* V100 */
    {7, 5, 128, 0, 1024, 0},          /* T4 */
    {8, 0, 128, 1024, 2048, 2048},    /* A100 */
    {8, 6, 256, 512, 1024, 1024},     /* GA10x */
    {8, 9, 256, 512, 1024, 1024},     /* AD10x */
    {9, 0, 256, 2048, 4096, 4096},    /* H100, H200 */
    {10, 0, 256, 4096, 8192, 8192},   /* B200 */
    {12, 0, 256, 512, 1024, 1024},    /* GB20x */
};

static void test_peak_tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sm_peaks / sizeof sm_peaks[0]; i++) {
        int ma = sm_peaks[i].major, mi = sm_peaks[i].minor;
        const double want[] = {sm_peaks[i].fp32, sm_peaks[i].tf32, sm_peaks[i].fp16,
                               sm_peaks[i].bf16};
        const gpuprobe_dtype dt[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_TF32,
                                     GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16};
        for (size_t d = 0; d < 4; d++)
            if (gp_gpu_flops_per_clock_sm(ma, mi, dt[d]) != want[d])
                fail_msg("CC %d.%d %s: %g FLOP/clock/SM, want %g", ma, mi,
                         gpuprobe_dtype_name(dt[d]), gp_gpu_flops_per_clock_sm(ma, mi, dt[d]),
                         want[d]);
        /* no rate for fp64 or the capacity-only types; none next door */
        assert_true(gp_gpu_flops_per_clock_sm(ma, mi, GPUPROBE_DTYPE_FP64) == 0);
        assert_true(gp_gpu_flops_per_clock_sm(ma, mi, GPUPROBE_DTYPE_INT8) == 0);
        assert_true(gp_gpu_flops_per_clock_sm(ma, mi + 1, GPUPROBE_DTYPE_FP32) == 0);
    }
    assert_true(gp_gpu_flops_per_clock_sm(11, 0, GPUPROBE_DTYPE_FP32) == 0);
    assert_true(gp_gpu_flops_per_clock_sm(6, 1, GPUPROBE_DTYPE_FP32) == 0);
    assert_true(gp_gpu_flops_per_clock_sm(0, 0, GPUPROBE_DTYPE_FP32) == 0);
    assert_true(gp_gpu_flops_per_clock_sm(-1, 0, GPUPROBE_DTYPE_FP32) == 0);

    /* Per core and clock: lanes x 2 (FMA) x 2 units; fp64 half of fp32. */
    static const struct {
        int simd;
        double fp32, fp64;
    } cpu[] = {
        {GPUPROBE_SIMD_AVX512, 64, 32}, {GPUPROBE_SIMD_AVX2_FMA, 32, 16},
        {GPUPROBE_SIMD_AVX, 16, 8},     {GPUPROBE_SIMD_SSE4_2, 8, 4},
        {GPUPROBE_SIMD_NONE, 0, 0},     {99, 0, 0},
    };
    for (size_t i = 0; i < sizeof cpu / sizeof cpu[0]; i++) {
        assert_true(gp_cpu_flops_per_cycle(cpu[i].simd, GPUPROBE_DTYPE_FP32) == cpu[i].fp32);
        assert_true(gp_cpu_flops_per_cycle(cpu[i].simd, GPUPROBE_DTYPE_FP64) == cpu[i].fp64);
        for (int dt = GPUPROBE_DTYPE_TF32; dt <= GPUPROBE_DTYPE_INT4; dt++)
            assert_true(gp_cpu_flops_per_cycle(cpu[i].simd, (gpuprobe_dtype)dt) == 0);
    }
}

/* The CPU peak of a run: clock x cores doing the work x FLOP per cycle,
 * with the clock and SIMD level from a simulated /proc and /sys (2 GHz,
 * AVX2 + FMA: 32 fp32 or 16 fp64 FLOP per cycle). */
static void test_cpu_peak_figure(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mm-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo", "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n");
    sr_put(root, "proc/cpuinfo", "processor : 0\nmodel name : Sim\n"
                                 "flags : fpu sse4_2 avx avx2 fma\ncpu MHz : 1234.5\n");
    sr_put(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "2000000\n");
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(online >= 1);
    static const struct {
        gpuprobe_dtype dt;
        int threads;
        double per_core; /* GFLOP/s of one core at 2 GHz */
    } runs[] = {
        {GPUPROBE_DTYPE_FP32, 1, 64}, {GPUPROBE_DTYPE_FP64, 1, 32},
        {GPUPROBE_DTYPE_FP32, 2, 64}, {GPUPROBE_DTYPE_FP32, 0, 64},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        gpuprobe_matmul_options *o = small_opts(32, 32, 32, runs[i].dt);
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, runs[i].threads);
        gpuprobe_matmul_result *r = NULL;
        double t0 = gp_now();
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
        double wall = gp_now() - t0;
        /* the run times are durations within the call */
        assert_true(get_d(r, GPUPROBE_METRIC_MIN_S) > 0);
        assert_true(get_d(r, GPUPROBE_METRIC_MAX_S) <= wall);
        assert_true(get_d(r, GPUPROBE_METRIC_SETUP_S) <= wall);
        int64_t used = get_i(r, GPUPROBE_METRIC_THREADS);
        if (runs[i].threads > 0)
            assert_int_equal(used, runs[i].threads > online ? online : runs[i].threads);
        long cores = used >= 1 && used <= online ? used : online;
        double peak = get_d(r, GPUPROBE_METRIC_PEAK_GFLOPS);
        if (peak != runs[i].per_core * (double)cores)
            fail_msg("run %zu: peak %g GFLOP/s, want %g x %ld cores", i, peak,
                     runs[i].per_core, cores);
        assert_true(get_d(r, GPUPROBE_METRIC_PEAK_FRACTION) ==
                    get_d(r, GPUPROBE_METRIC_GFLOPS) / peak);
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o);
    }

    /* A peak below 1 GFLOP/s is still a peak (a 1 kHz clock, one core). */
    ctx->devices[0].clock_khz = 1;
    {
        gpuprobe_matmul_options *o1 = small_opts(32, 32, 32, GPUPROBE_DTYPE_FP32);
        gpuprobe_matmul_options_set(o1, GPUPROBE_MATMUL_CPU_THREADS, 1);
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o1, 0, &r), GPUPROBE_OK);
        assert_true(get_d(r, GPUPROBE_METRIC_PEAK_GFLOPS) == 1.0 * 1e3 * 1.0 * 32.0 / 1e9);
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o1);
    }
    ctx->devices[0].clock_khz = 2000000;

    /* No more cores than the device has (said to be 1 here); all the
     * threads used when its core count is unknown (0). */
    gpuprobe_matmul_options *o = small_opts(32, 32, 32, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 2);
    for (int cores = 1; cores >= 0; cores--) {
        ctx->devices[0].logical_cores = cores;
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
        int64_t used = get_i(r, GPUPROBE_METRIC_THREADS);
        double want = 64.0 * (double)(cores ? cores : used);
        if (get_d(r, GPUPROBE_METRIC_PEAK_GFLOPS) != want)
            fail_msg("%d logical cores, %lld threads: peak %g, want %g", cores,
                     (long long)used, get_d(r, GPUPROBE_METRIC_PEAK_GFLOPS), want);
        gpuprobe_matmul_result_destroy(r);
    }
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
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

    /* Precisions the CPU cannot do (bf16: test_cpu_bf16_off). */
    for (int dt = GPUPROBE_DTYPE_TF32; dt <= GPUPROBE_DTYPE_FP16; dt++) {
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
        assert_null(r);
        assert_non_null(strstr(gpuprobe_last_error(ctx), gpuprobe_dtype_name((gpuprobe_dtype)dt)));
    }

    /* fp32 at the largest sizes: each buffer fits size_t ((2^31-1)^2 x 4
     * bytes < 2^64), their sum does not. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, INT32_MAX);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OVERFLOW);
    assert_null(r);

    /* Buffers whose size overflows size_t: (2^31-1)^2 x 8 bytes > 2^64. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_FP64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, INT32_MAX);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, INT32_MAX);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OVERFLOW);
    assert_null(r);
    /* Only C's size overflowing (k = 1: A and B are 16 GiB each) is the
     * same refusal. */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 1);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OVERFLOW);
    assert_null(r);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "does not fit in size_t"));

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

/* Buffer sizes: m x n elements, refused (-1, nothing written) for a
 * non-positive dimension, a zero element size, or more than SIZE_MAX. */
static void test_buffer_bytes(void **state)
{
    (void)state;
    size_t b = 7;
    assert_int_equal(gp_mm_bytes(2, 3, 4, &b), 0);
    assert_int_equal(b, 24);
    b = 7;
    assert_int_equal(gp_mm_bytes(0, 3, 4, &b), -1);
    assert_int_equal(gp_mm_bytes(3, 0, 4, &b), -1);
    assert_int_equal(gp_mm_bytes(-1, 3, 4, &b), -1);
    assert_int_equal(gp_mm_bytes(3, 3, 0, &b), -1);
    assert_int_equal(b, 7);
    /* 3 x (SIZE_MAX / 3) elements are exactly SIZE_MAX; one more is not */
    assert_int_equal(gp_mm_bytes(3, (int64_t)(SIZE_MAX / 3), 1, &b), 0);
    assert_true(b == SIZE_MAX);
    assert_int_equal(gp_mm_bytes(3, (int64_t)(SIZE_MAX / 3) + 1, 1, &b), -1);
    /* the element size as the last factor */
    assert_int_equal(gp_mm_bytes(1, (int64_t)(SIZE_MAX / 8), 8, &b), 0);
    assert_true(b == SIZE_MAX / 8 * 8);
    assert_int_equal(gp_mm_bytes(1, (int64_t)(SIZE_MAX / 8) + 1, 8, &b), -1);
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
    print_message("%s\n", msg);
    /* A, B and C, plus OpenBLAS's packed panels (counted by the check). */
    assert_non_null(strstr(msg, "A, B and C 786432 bytes"));
    assert_non_null(strstr(msg, "of host memory"));
    assert_non_null(strstr(msg, "only 524288 bytes (0.5 MiB) are available"));
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

/* The pre-check takes the cgroup's room when it is below MemAvailable,
 * and MemAvailable when that is lower. */
static void test_host_memory_cgroup_room(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mm-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo", "MemTotal: 2097152 kB\nMemAvailable: 1048576 kB\n");
    sr_put(root, "proc/self/cgroup", "0::/job\n");
    sr_put(root, "sys/fs/cgroup/job/memory.max", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/job/memory.current", "1073217536\n"); /* 512 KiB left */
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_matmul_options *o = small_opts(256, 256, 256, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(r);
    const char *msg = gpuprobe_last_error(ctx);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "A, B and C 786432 bytes"));
    assert_non_null(strstr(msg, "the cgroup memory limit leaves 524288 bytes"));
    /* What the run needs: A, B and C and OpenBLAS's panels. */
    const char *p = strstr(msg, " needs ");
    assert_non_null(p);
    unsigned long long need = strtoull(p + 7, NULL, 10);
    assert_true(need >= 786432 && need % 1024 == 0);
    /* 64^3 (48 KiB and its panels) fits a room of the same size */
    char text[96];
    snprintf(text, sizeof text, "%llu\n", 1073741824ULL - need);
    sr_put(root, "sys/fs/cgroup/job/memory.current", text);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 64);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 64);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    /* usage above the limit: no room at all */
    sr_put(root, "sys/fs/cgroup/job/memory.current", "2000000000\n");
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "the cgroup memory limit leaves 0 bytes"));
    /* room (1 GiB) above MemAvailable (512 KiB): MemAvailable counts */
    sr_put(root, "proc/meminfo", "MemTotal: 2097152 kB\nMemAvailable: 512 kB\n");
    sr_put(root, "sys/fs/cgroup/job/memory.current", "0\n");
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 256);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 256);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 256);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "only 524288 bytes"));
    /* exactly enough available: it runs; one KiB less: refused */
    snprintf(text, sizeof text, "MemTotal: 2097152 kB\nMemAvailable: %llu kB\n", need / 1024 - 1);
    sr_put(root, "proc/meminfo", text);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    snprintf(text, sizeof text, "MemTotal: 2097152 kB\nMemAvailable: %llu kB\n", need / 1024);
    sr_put(root, "proc/meminfo", text);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
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

/* The refusal's figures follow the element size: under a cgroup limit
 * that leaves no room, fp64 needs twice the bytes of fp32 for A, B and C
 * and twice for OpenBLAS's packed panels (8 bytes an element, not 4). */
static unsigned long long figure_after(const char *msg, const char *label)
{
    const char *p = strstr(msg, label);
    assert_non_null(p);
    return strtoull(p + strlen(label), NULL, 10);
}

static void test_refusal_figures_follow_dtype(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mm-XXXXXX";
    assert_non_null(mkdtemp(root));
    put_file(root, "proc/meminfo", "MemTotal: 16777216 kB\nMemAvailable: 12582912 kB\n");
    put_file(root, "proc/self/cgroup", "0::/job\n");
    put_file(root, "sys/fs/cgroup/job/memory.max", "4096\n");
    put_file(root, "sys/fs/cgroup/job/memory.current", "0\n");
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    static const gpuprobe_dtype dts[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_FP64};
    unsigned long long abc[2], panels[2];
    for (int i = 0; i < 2; i++) {
        gpuprobe_matmul_options *o = small_opts(96, 80, 64, dts[i]);
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
        assert_null(r);
        const char *msg = gpuprobe_last_error(ctx);
        abc[i] = figure_after(msg, "A, B and C ");
        panels[i] = figure_after(msg, "packed panels up to ");
        gpuprobe_matmul_options_destroy(o);
    }
    assert_int_equal(abc[0], 4ull * (96 * 64 + 64 * 80 + 96 * 80));
    assert_int_equal(abc[1], 2 * abc[0]);
    assert_true(panels[0] > 0);
    assert_int_equal(panels[1], 2 * panels[0]);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* The address space a run needs: A, B and C, a page more each (each is a
 * mapping of its own), and OpenBLAS's buffers, against RLIMIT_AS less what
 * is in use (VmSize, from a simulated /proc/self/status). The real limit
 * is set far above what the process maps, so nothing is constrained. */
static void test_address_space_need(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    unsigned long long vm_kb = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0)
            vm_kb = strtoull(line + 7, NULL, 10);
    fclose(f);
    assert_true(vm_kb > 0);
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    rlim_t lim = (rlim_t)((vm_kb * 1024 + (UINT64_C(64) << 30)) & ~((UINT64_C(1) << 20) - 1));
    if ((old.rlim_max != RLIM_INFINITY && lim > old.rlim_max) ||
        (old.rlim_cur != RLIM_INFINITY && lim > old.rlim_cur)) {
        print_message("RLIMIT_AS is set here already: nothing to simulate\n");
        skip();
    }
    struct rlimit rl = {lim, old.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_AS, &rl), 0);

    char root[] = "/tmp/gpuprobe-mm-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo", "MemTotal: 1073741824 kB\nMemAvailable: 1073741824 kB\n");
    char text[96];
    const unsigned long long room = 16u << 20;
    snprintf(text, sizeof text, "VmSize: %llu kB\nVmData: 0 kB\n",
             ((unsigned long long)lim - room) / 1024);
    sr_put(root, "proc/self/status", text);
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_matmul_options *o = small_opts(1024, 1024, 1024, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 1);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    char msg[GP_ERR_LEN];
    snprintf(msg, sizeof msg, "%s", gpuprobe_last_error(ctx));
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    print_message("%s\n", msg);
    assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(r);
    const char *p = strstr(msg, " needs ");
    assert_non_null(p);
    unsigned long long need = strtoull(p + 7, NULL, 10);
    const char *abc = "of address space (A, B and C 12582912 bytes, OpenBLAS ";
    p = strstr(msg, abc);
    assert_non_null(p);
    unsigned long long blas = strtoull(p + strlen(abc), NULL, 10);
    assert_true(blas > 0);
    if (need != 12582912ULL + 3 * 4096 + blas)
        fail_msg("needs %llu bytes, not A, B and C, 3 pages and OpenBLAS's %llu", need, blas);
    snprintf(text, sizeof text, "RLIMIT_AS leaves %llu bytes (16.0 MiB)", room);
    assert_non_null(strstr(msg, text));
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
        {70000.0f, 0x7c00}, {-131000.0f, 0xfc00}, /* in [2^16, 2^17) */
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
        {1.0f + 0x1p-11f + 0x1p-23f, 0x3c01}, /* one fp32 unit above it */
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

    /* A NaN stays quiet (0x200) and keeps the top 9 bits of its fp32
     * payload below that, with its sign. */
    static const struct {
        uint32_t in;
        uint16_t out;
    } nans[] = {
        {0x7fc00000, 0x7e00}, {0xffc00000, 0xfe00}, /* quiet, no payload */
        {0x7f800001, 0x7e00},                       /* payload below the kept bits */
        {0x7f802000, 0x7e01},                       /* lowest kept payload bit */
        {0x7fa00000, 0x7f00},                       /* signalling, top payload bit */
        {0x7fffe000, 0x7fff}, {0xffffffff, 0xffff}, /* every kept bit */
        {0x7f955000, 0x7eaa},
    };
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        uint16_t h = gp_f32_to_f16(f32_of(nans[i].in));
        if (h != nans[i].out)
            fail_msg("f16(0x%08x) = 0x%04x, want 0x%04x", nans[i].in, h, nans[i].out);
    }

    /* Everything far below the smallest subnormal's half is a signed zero,
     * down to the smallest fp32 normal. */
    static const uint32_t tiny[] = {0x33000000 /* 2^-25 */, 0x32ffffff, 0x30000000,
                                    0x2f7fffff, 0x1e3ce508 /* 1e-20 */, 0x0d800000,
                                    0x0a000000, 0x00ffffff, 0x00800000 /* FLT_MIN */,
                                    0x007fffff};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        uint16_t h = gp_f32_to_f16(f32_of(tiny[i]));
        uint16_t hn = gp_f32_to_f16(f32_of(tiny[i] | 0x80000000u));
        if (h != 0x0000 || hn != 0x8000)
            fail_msg("f16(+-0x%08x) = 0x%04x / 0x%04x, want 0x0000 / 0x8000", tiny[i],
                     h, hn);
    }

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

/* splitmix64 is the published generator (the reference outputs for state
 * 0), and the inputs are its documented images: (2u + 1 - 2^23) / 2^23 of
 * the top 23 bits (fp32), (2u + 1 - 2^52) / 2^52 of the top 52 (fp64),
 * from the state seed ^ (stream * 0xD1B54A32D192ED03) advanced once. The
 * figures were computed apart from the library. Nothing is written past
 * `count` elements. */
static void test_generator_values(void **state)
{
    (void)state;
    uint64_t s = 0;
    assert_true(gp_splitmix64(&s) == UINT64_C(0xe220a8397b1dcdaf));
    assert_true(gp_splitmix64(&s) == UINT64_C(0x6e789e6aa1b965f4));
    assert_true(gp_splitmix64(&s) == UINT64_C(0x06c45d188009454f));
    assert_true(gp_splitmix64(&s) == UINT64_C(0xf88bb8a8724c81ec));

    static const float f32[4] = {-0x1.13332cp-1f, -0x1.b75ff8p-2f, -0x1.fb821cp-1f,
                                 0x1.3cc258p-2f};
    static const double f64[4] = {0x1.716a12e6982f6p-1, -0x1.626c0fe8c236ap-1,
                                  -0x1.a6d717c39b0b2p-1, 0x1.b9d871e07058ep-1};
    float fbuf[5];
    double dbuf[5];
    uint16_t hbuf[5];
    memset(fbuf, 0x7f, sizeof fbuf);
    memset(dbuf, 0x7f, sizeof dbuf);
    gp_fill_random(fbuf, GP_ELEM_F32, 4, 42, 1);
    gp_fill_random(dbuf, GP_ELEM_F64, 4, 42, 2);
    for (int i = 0; i < 4; i++) {
        if (fbuf[i] != f32[i])
            fail_msg("fp32 input %d: %a, want %a", i, (double)fbuf[i], (double)f32[i]);
        if (dbuf[i] != f64[i])
            fail_msg("fp64 input %d: %a, want %a", i, dbuf[i], f64[i]);
    }
    uint32_t canary;
    memcpy(&canary, &fbuf[4], sizeof canary);
    assert_int_equal(canary, 0x7f7f7f7f);
    uint64_t canary64;
    memcpy(&canary64, &dbuf[4], sizeof canary64);
    assert_true(canary64 == UINT64_C(0x7f7f7f7f7f7f7f7f));
    for (int e = GP_ELEM_F16; e <= GP_ELEM_BF16; e++) {
        hbuf[4] = 0x7f7f;
        gp_fill_random(hbuf, (gp_elem)e, 4, 42, 1);
        for (int i = 0; i < 4; i++)
            assert_int_equal(hbuf[i], e == GP_ELEM_F16 ? gp_f32_to_f16(f32[i])
                                                       : gp_f32_to_bf16(f32[i]));
        assert_int_equal(hbuf[4], 0x7f7f);
    }
}

/* Element sizes, and every element type read back as it was stored (its
 * neighbours untouched). */
static void test_elements(void **state)
{
    (void)state;
    assert_int_equal(gp_elem_size(GP_ELEM_F64), 8);
    assert_int_equal(gp_elem_size(GP_ELEM_F32), 4);
    assert_int_equal(gp_elem_size(GP_ELEM_F16), 2);
    assert_int_equal(gp_elem_size(GP_ELEM_BF16), 2);
    assert_int_equal(gp_elem_size((gp_elem)7), 0);
    assert_true(isnan(gp_elem_get(NULL, (gp_elem)7, 0)));
    for (int e = GP_ELEM_F32; e <= GP_ELEM_BF16; e++) {
        unsigned char buf[4 * 8];
        memset(buf, 0xA5, sizeof buf);
        gp_elem_set(buf, (gp_elem)e, 1, 1.5);
        gp_elem_set(buf, (gp_elem)e, 2, -0.25);
        assert_true(gp_elem_get(buf, (gp_elem)e, 1) == 1.5);
        assert_true(gp_elem_get(buf, (gp_elem)e, 2) == -0.25);
        size_t es = gp_elem_size((gp_elem)e);
        for (size_t i = 0; i < sizeof buf; i++)
            if ((i < es || i >= 3 * es) && buf[i] != 0xA5)
                fail_msg("element type %d: byte %zu written", e, i);
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

/* The poison written into an output before a run: a quiet NaN in every
 * element of every type (0x7e00 in fp16, 0x7fc0 in bf16), and not one
 * element past the count. */
static void test_fill_nan(void **state)
{
    (void)state;
    double d[6];
    float f[6];
    uint16_t h[6], bf[6];
    for (int i = 0; i < 6; i++) {
        d[i] = 1.5;
        f[i] = 2.5f;
        h[i] = bf[i] = 0x1234;
    }
    gp_fill_nan(d, GP_ELEM_F64, 5);
    gp_fill_nan(f, GP_ELEM_F32, 5);
    gp_fill_nan(h, GP_ELEM_F16, 5);
    gp_fill_nan(bf, GP_ELEM_BF16, 5);
    for (int i = 0; i < 5; i++) {
        assert_true(isnan(d[i]));
        assert_true(isnan(f[i]));
        assert_int_equal(h[i], 0x7e00);
        assert_int_equal(bf[i], 0x7fc0);
    }
    assert_true(d[5] == 1.5);
    assert_true(f[5] == 2.5f);
    assert_int_equal(h[5], 0x1234);
    assert_int_equal(bf[5], 0x1234);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_cpu_bf16),
        cmocka_unit_test(test_cpu_bf16_off),
        cmocka_unit_test(test_cpu_bf16_threads),
        cmocka_unit_test(test_autorange),
        cmocka_unit_test(test_steady_when_windows_agree),
        cmocka_unit_test(test_window_length),
        cmocka_unit_test(test_warmup_bound),
        cmocka_unit_test(test_budget_ends_runs),
        cmocka_unit_test(test_batch_from_steady_rate),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_failure_in_each_phase),
        cmocka_unit_test(test_f16),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_random_inputs),
        cmocka_unit_test(test_generator_values),
        cmocka_unit_test(test_elements),
        cmocka_unit_test(test_samples_spread),
        cmocka_unit_test(test_samples_corners),
        cmocka_unit_test(test_fill_nan),
        cmocka_unit_test(test_tolerance_formula),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_peaks),
        cmocka_unit_test(test_peak_tables),
        cmocka_unit_test(test_cpu_peak_figure),
        cmocka_unit_test(test_small_output_checked_in_full),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_result_figures),
        cmocka_unit_test(test_runs_and_budget),
        cmocka_unit_test(test_verify_catches),
        cmocka_unit_test(test_verify_catches_tf32),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_buffer_bytes),
        cmocka_unit_test(test_host_memory_limit),
        cmocka_unit_test(test_cgroup_room_counts_openblas),
        cmocka_unit_test(test_refusal_figures_follow_dtype),
        cmocka_unit_test(test_address_space_need),
        cmocka_unit_test(test_host_memory_cgroup_room),
        cmocka_unit_test(test_threads_restored),
        cmocka_unit_test(test_gpu_request_without_gpu),
        cmocka_unit_test(test_real_cuda_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
