/*
 * test_gpu.c - assertions that need a real, usable NVIDIA GPU. On a machine
 * without one every test checks that CUDA reports itself unusable with a
 * named cause, then skips the GPU-only part (reported as skipped by cmocka).
 * scripts/gpu-check runs this on a GPU machine.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuprobe.h"

static gpuprobe_context *ctx;
static gpuprobe_cuda_cause cause;

static int setup(void **state)
{
    (void)state;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return -1;
    const char *detail = NULL;
    if (gpuprobe_cuda_status(ctx, &cause, &detail) != GPUPROBE_OK)
        return -1;
    printf("# CUDA cause: %s (%s)\n", gpuprobe_cuda_cause_name(cause), detail);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gpuprobe_context_destroy(ctx);
    return 0;
}

/* Without a GPU: the cause is named, not "available", and the CPU remains. */
static void require_gpu(void)
{
    if (cause != GPUPROBE_CUDA_AVAILABLE) {
        size_t count = 0;
        assert_int_equal(gpuprobe_device_count(ctx, &count), GPUPROBE_OK);
        assert_int_equal(count, 1);
        assert_string_not_equal(gpuprobe_cuda_cause_name(cause), "unknown");
        skip();
    }
}

static void test_devices_sane(void **state)
{
    (void)state;
    require_gpu();
    size_t count = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &count), GPUPROBE_OK);
    assert_true(count >= 2);
    for (size_t d = 1; d < count; d++) {
        int64_t v = -1;
        const char *s = NULL;
        assert_int_equal(gpuprobe_device_get_int(ctx, d, GPUPROBE_ATTR_KIND, &v), GPUPROBE_OK);
        assert_int_equal(v, GPUPROBE_DEVICE_CUDA);
        assert_int_equal(gpuprobe_device_get_int(ctx, d, GPUPROBE_ATTR_CUDA_INDEX, &v), GPUPROBE_OK);
        assert_int_equal(v, (int64_t)d - 1);
        assert_int_equal(gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_NAME, &s), GPUPROBE_OK);
        assert_true(strlen(s) > 0);
        assert_int_equal(gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_UUID, &s), GPUPROBE_OK);
        assert_int_equal(strlen(s), strlen("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"));
        assert_int_equal(strncmp(s, "GPU-", 4), 0);
        assert_int_equal(gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_PCI_BUS_ID, &s), GPUPROBE_OK);
        assert_non_null(strchr(s, ':'));
        assert_int_equal(gpuprobe_device_get_int(ctx, d, GPUPROBE_ATTR_CC_MAJOR, &v), GPUPROBE_OK);
        assert_true(v >= 3 && v < 100);
        assert_int_equal(gpuprobe_device_get_int(ctx, d, GPUPROBE_ATTR_MULTIPROCESSORS, &v), GPUPROBE_OK);
        assert_true(v > 0);
        assert_int_equal(gpuprobe_device_get_int(ctx, d, GPUPROBE_ATTR_TOTAL_MEMORY, &v), GPUPROBE_OK);
        assert_true(v > (int64_t)(256u << 20));

        gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
        assert_int_equal(gpuprobe_device_memory(ctx, d, &mi, 0), GPUPROBE_OK);
        assert_true(mi.available_bytes > 0);
        assert_true(mi.available_bytes <= mi.total_bytes);
        assert_int_equal((int64_t)mi.total_bytes, v);
    }
    int drv = 0, rt = 0;
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &drv), GPUPROBE_OK);
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &rt), GPUPROBE_OK);
    assert_true(drv >= 1000 && rt >= 1000);
    assert_true(drv / 1000 >= rt / 1000);
}

static void test_select_picks_gpu(void **state)
{
    (void)state;
    require_gpu();
    size_t dev = 0, count = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &count), GPUPROBE_OK);
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL), GPUPROBE_OK);
    assert_true(dev >= 1);
    assert_int_equal(gpuprobe_select(ctx, "cuda:0", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL), GPUPROBE_OK);
    assert_int_equal(dev, 1);
    char spec[32];
    snprintf(spec, sizeof spec, "cuda:%zu", count - 1); /* one past the last ordinal */
    assert_int_equal(gpuprobe_select(ctx, spec, NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL), GPUPROBE_ERR_NOT_FOUND);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
}

static void run_verified(gpuprobe_dtype dtype)
{
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    /* awkward, non-square shape: catches row-/column-major mix-ups */
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 1000), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 777), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 1203), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dtype), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 3), GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 1, o, 0, &r);
    if (st != GPUPROBE_OK)
        print_error("%s: %s: %s\n", gpuprobe_dtype_name(dtype), gpuprobe_status_string(st), gpuprobe_last_error(ctx));
    assert_int_equal(st, GPUPROBE_OK);
    int64_t verified = 0;
    double gflops = 0, err = 1;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_VERIFIED, &verified), GPUPROBE_OK);
    assert_int_equal(verified, 1);
    assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_GFLOPS, &gflops), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_MAX_ERROR, &err), GPUPROBE_OK);
    printf("# %s: %.1f GFLOP/s, max scaled error %.3g\n", gpuprobe_dtype_name(dtype), gflops, err);
    assert_true(gflops > 0);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
}

static void test_matmul_fp32(void **s) { (void)s; require_gpu(); run_verified(GPUPROBE_DTYPE_FP32); }
static void test_matmul_tf32(void **s) { (void)s; require_gpu(); run_verified(GPUPROBE_DTYPE_TF32); }
static void test_matmul_fp16(void **s) { (void)s; require_gpu(); run_verified(GPUPROBE_DTYPE_FP16); }
static void test_matmul_bf16(void **s) { (void)s; require_gpu(); run_verified(GPUPROBE_DTYPE_BF16); }

/* A request far beyond the device's memory is a clean error, and the device
 * still works afterwards (nothing left allocated). */
static void test_matmul_too_big(void **state)
{
    (void)state;
    require_gpu();
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    int64_t lo = 0, hi = 0;
    assert_int_equal(gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_M, &lo, &hi), GPUPROBE_OK);
    int64_t big = hi < 400000 ? hi : 400000; /* 400000^2 * 4 B = 640 GB per matrix */
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, big), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY, 0), GPUPROBE_OK);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&o; /* must be reset to NULL */
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 1, o, 0, &r);
    assert_true(st == GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY || st == GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(r);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    gpuprobe_matmul_options_destroy(o);
    run_verified(GPUPROBE_DTYPE_FP32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices_sane),
        cmocka_unit_test(test_select_picks_gpu),
        cmocka_unit_test(test_matmul_fp32),
        cmocka_unit_test(test_matmul_tf32),
        cmocka_unit_test(test_matmul_fp16),
        cmocka_unit_test(test_matmul_bf16),
        cmocka_unit_test(test_matmul_too_big),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
