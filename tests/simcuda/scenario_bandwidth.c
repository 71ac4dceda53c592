/*
 * scenario_bandwidth.c - the GPU bandwidth measurement of libgpuprobe (the
 * shared library, unmodified) on simulated GPUs: its figures against the
 * simulation's time model, call by call (what is allocated, how often each
 * test's call is queued, the events on the run's own stream, the link read
 * while copies are queued); a degraded link; the automatic buffer size
 * against free memory; the dot product's check and its negative control;
 * every CUDA, cuBLAS and NVML call failing in turn, with nothing left
 * allocated or current afterwards.
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
#include <stdlib.h>

#include <cmocka.h>

#include <math.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "scenario.h"
#include "../bandwidth_check.h"

/* Slow enough that a pass of a 16 MiB buffer lasts over 5 ms in the model:
 * one repetition per pass, figures from the formulas below. */
static const char slow_h200[] = "mode = deferred\n[gpu]\npreset = H200\nmemory_gbps = 4\n"
                                "copy_gbps = 2\npageable_gbps = 1\n";
/* 64 KiB passes over 5 ms: the failure sweep's calls stay few. */
static const char crawl_h200[] = "[gpu]\npreset = H200\nmemory_gbps = 0.01\ncopy_gbps = 0.01\n"
                                 "pageable_gbps = 0.01\n";

static CUresult (*get_current)(CUcontext *);
static cudaError_t (*get_last_error)(void);

static int setup(void **state)
{
    (void)state;
    if (!get_current)
        get_current = CUDA_FN(CUresult (*)(CUcontext *), "libcuda.so.1", "cuCtxGetCurrent");
    if (!get_last_error)
        get_last_error = CUDA_FN(cudaError_t (*)(void), "libcudart.so.13", "cudaGetLastError");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    simcuda_clear_faults();
    return 0;
}

static void assert_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%.9g is not within %g of %.9g", got, rel, want);
}

/* Nothing of a run is left: no allocation, stream, event, handle, queued
 * work or pinned buffer; no context current. */
static void assert_left_nothing(int unit)
{
    simcuda_unit_state st = unit_state(unit);
    assert_int_equal(st.allocations + st.streams + st.events + st.blas_handles, 0);
    assert_int_equal(st.pending_ops, 0);
    assert_int_equal(simcuda_pinned_count(), 0);
    CUcontext c = (CUcontext)(uintptr_t)1;
    assert_int_equal(get_current(&c), CUDA_SUCCESS);
    assert_null(c);
}

static const gpuprobe_bandwidth_test gpu_tests[] = {
    GPUPROBE_BANDWIDTH_TEST_READ, GPUPROBE_BANDWIDTH_TEST_COPY,
    GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE,
    GPUPROBE_BANDWIDTH_TEST_D2H_PINNED, GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE};

/* What the model gives (runtime.c, cublas.c): bytes counted / modelled
 * time, GB/s. */
static double model_gbps(gpuprobe_bandwidth_test t, double b)
{
    switch (t) {
    case GPUPROBE_BANDWIDTH_TEST_READ: return 2 * b / (5e-6 + 2 * b / 4e9) / 1e9;
    case GPUPROBE_BANDWIDTH_TEST_COPY: return 2 * b / (2e-6 + 2 * b / 4e9) / 1e9;
    case GPUPROBE_BANDWIDTH_TEST_H2D_PINNED:
    case GPUPROBE_BANDWIDTH_TEST_D2H_PINNED: return b / (2e-6 + b / 2e9) / 1e9;
    default: return b / (2e-6 + b / 1e9) / 1e9;
    }
}

/* Every figure against the model; the calls each test made; the peaks from
 * NVML; everything released. */
static void figures_and_calls(void **state)
{
    (void)state;
    const double b = 16.0 * 1048576;
    fleet(slow_h200);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    simcuda_log_clear();
    gpuprobe_bandwidth_options *o = bw_options((int64_t)b, 3, 0);
    gpuprobe_bandwidth_result *r = NULL;
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    const double peak = 6144 / 8.0 * 3201 * 2 / 1e3, link = 32.0 * 128 / 130 / 8 * 16;
    for (size_t i = 0; i < sizeof gpu_tests / sizeof gpu_tests[0]; i++) {
        gpuprobe_bandwidth_test t = gpu_tests[i];
        double want = model_gbps(t, b);
        int host = t >= GPUPROBE_BANDWIDTH_TEST_H2D_PINNED;
        assert_near(fig(r, t, GPUPROBE_BANDWIDTH_BEST_GBPS), want, 1e-5);
        assert_near(fig(r, t, GPUPROBE_BANDWIDTH_MEDIAN_GBPS), want, 1e-5);
        assert_near(fig(r, t, GPUPROBE_BANDWIDTH_WORST_GBPS), want, 1e-5);
        assert_near(fig(r, t, GPUPROBE_BANDWIDTH_BYTES), host ? b : 2 * b, 0);
        assert_near(fig(r, t, GPUPROBE_BANDWIDTH_PEAK_FRACTION), want / (host ? link : peak), 1e-5);
        assert_near(fig(r, t, GPUPROBE_BANDWIDTH_REPEATS), 1, 0);
    }
    double v = 0;
    assert_int_equal(gpuprobe_bandwidth_result_test(r, GPUPROBE_BANDWIDTH_TEST_TRIAD,
                                                    GPUPROBE_BANDWIDTH_BEST_GBPS, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_near(dmetric(r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS), peak, 1e-12);
    assert_near(dmetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_PEAK_GBPS), link, 1e-12);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN), 5);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_WIDTH), 16);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED), 0);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES), (int64_t)b);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES), 0);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES), 50 * MiB);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_RUNS), 3);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_THREADS), 0);
    const char *s = NULL;
    EXPECT(ctx, gpuprobe_bandwidth_result_get_string(r, GPUPROBE_BANDWIDTH_METRIC_METHOD, &s),
           GPUPROBE_OK);
    assert_contains(s, "cuBLAS 13.1.0 cublasSdot_v2");
    EXPECT(ctx, gpuprobe_bandwidth_result_get_string(r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE, &s),
           GPUPROBE_OK);
    assert_contains(s, "NVML: 6144-bit bus x 3201 MHz");
    /* The calls: one warm-up and three timed passes of each test, each
     * between two events; the dot product's result read once; the link
     * read during each pinned host-to-device pass; x, y and the result
     * and the cuBLAS workspace on the device, one pinned buffer. */
    assert_int_equal(simcuda_log_count("cublasSdot_v2", 0), 4);
    assert_int_equal(simcuda_log_count("cudaMemcpyAsync", 0), 4 * 5 + 1);
    assert_int_equal(simcuda_log_count("cudaEventRecord", 0), 4 * 6 * 2);
    assert_int_equal(simcuda_log_count("cudaEventElapsedTime", SIMCUDA_ANY), 4 * 6);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetCurrPcieLinkGeneration", SIMCUDA_ANY), 4);
    assert_int_equal(simcuda_log_count("cudaStreamCreateWithFlags", 0), 1);
    assert_int_equal(simcuda_log_count("cudaEventCreate", 0), 2);
    assert_int_equal(simcuda_log_count("cudaMallocHost", 0), 1);
    assert_int_equal(simcuda_log_count("cudaMalloc", 0), 3);
    /* The 256-byte result takes a whole 2 MiB page. */
    assert_int_equal(unit_state(0).bytes_allocated, 2 * (uint64_t)b + 2 * MiB + 32 * MiB);
    assert_int_equal(simcuda_log_count("cublasSetPointerMode_v2", 0), 1);
    gpuprobe_bandwidth_result_destroy(r);
    assert_left_nothing(0);
    assert_only_simulated_cuda();
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* Only the tests asked run; a test the device does not have is refused
 * before anything is made. */
static void tests_asked(void **state)
{
    (void)state;
    fleet(slow_h200);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    simcuda_log_clear();
    gpuprobe_bandwidth_options *o =
        bw_options(1 << 20, 2, 1u << GPUPROBE_BANDWIDTH_TEST_H2D_PINNED);
    gpuprobe_bandwidth_result *r = NULL;
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_true(fig(r, GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, GPUPROBE_BANDWIDTH_BEST_GBPS) > 0);
    double v;
    assert_int_equal(gpuprobe_bandwidth_result_test(r, GPUPROBE_BANDWIDTH_TEST_READ,
                                                    GPUPROBE_BANDWIDTH_BEST_GBPS, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(simcuda_log_count("cublasSdot_v2", SIMCUDA_ANY), 0);
    assert_int_equal(simcuda_log_count("cudaMallocHost", SIMCUDA_ANY), 1);
    gpuprobe_bandwidth_result_destroy(r);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_TESTS,
                                                    1u << GPUPROBE_BANDWIDTH_TEST_TRIAD),
                     GPUPROBE_OK);
    simcuda_log_clear();
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_null(r);
    assert_contains(gpuprobe_last_error(ctx), "triad");
    assert_int_equal(simcuda_log_count("cudaMalloc", SIMCUDA_ANY), 0);
    assert_left_nothing(0);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* A link below its maximum while the copies run is flagged, and the copies
 * are as slow as the model makes them; a link that only idles low (as
 * GPUs save power) is not, because it is read while the copies are
 * queued. */
static void degraded_link(void **state)
{
    (void)state;
    static const struct {
        const char *link;
        int gen, width, degraded;
        double factor;
    } cases[] = {
        {"pcie = 4x8\npcie_idle = 1x8\n", 4, 8, 1, 0.25},
        {"pcie_idle = 1x16\n", 5, 16, 0, 1.0},
        {"pcie = 5x8\n", 5, 8, 1, 0.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s%s", slow_h200, cases[i].link);
        fleet(text);
        gpuprobe_context *ctx = new_ctx();
        gpuprobe_bandwidth_options *o =
            bw_options(16 << 20, 2, 1u << GPUPROBE_BANDWIDTH_TEST_H2D_PINNED);
        gpuprobe_bandwidth_result *r = NULL;
        EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
        assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN), cases[i].gen);
        assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_WIDTH), cases[i].width);
        assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_GEN), 5);
        assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_WIDTH), 16);
        assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED), cases[i].degraded);
        double b = 16.0 * 1048576, rate = 2e9 * cases[i].factor;
        assert_near(fig(r, GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, GPUPROBE_BANDWIDTH_BEST_GBPS),
                    b / (2e-6 + b / rate) / 1e9, 1e-5);
        double lane = 32.0 * 128 / 130 / 8, lane4 = 16.0 * 128 / 130 / 8;
        assert_near(dmetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_PEAK_GBPS),
                    (cases[i].gen == 5 ? lane : lane4) * cases[i].width, 1e-12);
        assert_near(dmetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_MAX_PEAK_GBPS), lane * 16, 1e-12);
        gpuprobe_bandwidth_result_destroy(r);
        gpuprobe_bandwidth_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
}

/* The size rule: max(1 GiB, 8 x L2), made smaller when free memory is
 * short (two buffers and 64 MiB of headroom); a size asked that does not
 * fit is refused before anything is allocated. 120 MiB free, less the
 * context (10 MiB) and the cuBLAS workspace (32 MiB), less the headroom:
 * 14 MiB, 6 MiB a buffer in 2 MiB steps. */
static void automatic_size(void **state)
{
    (void)state;
    fleet("context_bytes = 10MiB\n[gpu]\npreset = H200\nfree = 300MiB\nmemory_gbps = 100\n"
          "copy_gbps = 5\n");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(0, 1, 0);
    gpuprobe_bandwidth_result *r = NULL;
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES), 1024 * MiB);
    /* 300 MiB free, less the context (10 MiB) and cuBLAS's workspace
     * (32 MiB) = 258 MiB at cudaMemGetInfo; less the headroom (64 MiB) and
     * the allocation allowance (1/1024 of 143,771 MiB) = 53.6 MiB for two
     * buffers: 26 MiB each, in 2 MiB steps. */
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES), 26 * MiB);
    assert_true(fig(r, GPUPROBE_BANDWIDTH_TEST_READ, GPUPROBE_BANDWIDTH_REPEATS) > 1);
    gpuprobe_bandwidth_result_destroy(r);
    assert_left_nothing(0);
    /* Asked for more than fits: refused, nothing allocated. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES,
                                                    (int64_t)(64 * MiB)), GPUPROBE_OK);
    simcuda_log_clear();
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY);
    assert_null(r);
    assert_contains(gpuprobe_last_error(ctx), "2 buffers of 67108864 bytes need 134217728 bytes "
                                              "of device memory");
    assert_int_equal(simcuda_log_count("cudaMalloc", SIMCUDA_ANY), 0);
    assert_left_nothing(0);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* The dot product is checked: a cuBLAS that reads half the vectors is
 * caught (the negative control), and the run releases everything. The
 * check's tolerance (1e-3 of the sum: fp32 sums of a billion terms) cannot
 * see one element missing of a large buffer; it sees an operand unread, a
 * count wrong, a result never written. */
static void check_catches_a_wrong_dot(void **state)
{
    (void)state;
    fleet(slow_h200);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(1 << 20, 1, 1u << GPUPROBE_BANDWIDTH_TEST_READ);
    gpuprobe_bandwidth_result *r = NULL;
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    gpuprobe_bandwidth_result_destroy(r);
    assert_int_equal(simcuda_set("dot_bug = half"), 0);
    EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_VERIFY_FAILED);
    assert_null(r);
    assert_contains(gpuprobe_last_error(ctx), "cublasSdot of 262144 elements gave");
    assert_left_nothing(0);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* Every call of a run failing in turn (each nth call of each function,
 * with work run at once and deferred): the run fails with the call named,
 * leaves nothing allocated, created or current, leaves the runtime's last
 * error (the application's) clear, and the next run succeeds. */
static void failure_sweep(void **state)
{
    (void)state;
    static const struct {
        const char *func;
        gpuprobe_status want;
        const char *named;
    } calls[] = {
        {"cuDevicePrimaryCtxRetain", GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        {"cuCtxPushCurrent_v2", GPUPROBE_ERR_CUDA, "CUDA_ERROR_UNKNOWN"},
        {"cudaStreamCreateWithFlags", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cublasCreate_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_NOT_INITIALIZED"},
        {"cublasSetStream_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cublasSetPointerMode_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cublasGetVersion_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cudaEventCreate", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaMemGetInfo", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaMalloc", GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY, "cudaErrorMemoryAllocation"},
        {"cudaMemsetAsync", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaStreamSynchronize", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaMallocHost", GPUPROBE_ERR_OUT_OF_MEMORY, "cudaErrorMemoryAllocation"},
        {"cudaEventRecord", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cublasSdot_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cudaMemcpyAsync", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaEventSynchronize", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaEventElapsedTime", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        /* Last: a pop the driver refuses leaves the context current. */
        {"cuCtxPopCurrent_v2", GPUPROBE_ERR_CUDA, "CUDA_ERROR_UNKNOWN"},
    };
    const size_t pop = sizeof calls / sizeof calls[0] - 1;
    int runs = 0;
    for (int deferred = 0; deferred < 2; deferred++)
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
            for (unsigned long nth = 1;; nth++) {
                fleet(crawl_h200);
                assert_int_equal(simcuda_set(deferred ? "mode = deferred" : "mode = eager"), 0);
                gpuprobe_context *ctx = new_ctx();
                size_t n = 0;
                EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
                assert_int_equal(simcuda_fail(calls[i].func, nth, 0, SIMCUDA_ONCE), 0);
                gpuprobe_bandwidth_options *o = bw_options(64 << 10, 1, 0);
                gpuprobe_bandwidth_result *r = NULL;
                gpuprobe_status st = gpuprobe_bandwidth_run(ctx, 1, o, 0, &r);
                runs++;
                if (simcuda_faults_fired() == 0) { /* no nth call: done */
                    check_status(ctx, st, GPUPROBE_OK, calls[i].func);
                    gpuprobe_bandwidth_result_destroy(r);
                    gpuprobe_bandwidth_options_destroy(o);
                    gpuprobe_context_destroy(ctx);
                    assert_true(nth > 1); /* every call here is made at least once */
                    break;
                }
                check_status(ctx, st, calls[i].want, calls[i].func);
                assert_null(r);
                assert_contains(gpuprobe_last_error(ctx), calls[i].named);
                assert_int_equal(get_last_error(), cudaSuccess);
                if (i != pop)
                    assert_left_nothing(0);
                simcuda_clear_faults();
                EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
                gpuprobe_bandwidth_result_destroy(r);
                gpuprobe_bandwidth_options_destroy(o);
                gpuprobe_context_destroy(ctx);
            }
    print_message("%d runs\n", runs);
}

/* What the run only reads to describe the device: a failure is an unknown
 * figure, never a failed run. The memory's peak then comes from the CUDA
 * device attributes; the link is unknown, and so is whether it is
 * degraded; the L2 cache is unknown. */
static void descriptions_optional(void **state)
{
    (void)state;
    static const char *const funcs[] = {"nvmlDeviceGetMemoryBusWidth:1", "nvmlDeviceGetMaxClockInfo:1",
                                        "nvmlDeviceGetCurrPcieLinkGeneration:1+",
                                        "nvmlDeviceGetMaxPcieLinkWidth:1", "cudaDeviceGetAttribute:1"};
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++) {
        fleet(slow_h200);
        gpuprobe_context *ctx = new_ctx();
        size_t n = 0;
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        char rule[96];
        snprintf(rule, sizeof rule, "fail = %s", funcs[i]);
        assert_int_equal(simcuda_set(rule), 0);
        gpuprobe_bandwidth_options *o = bw_options(1 << 20, 1, 0);
        gpuprobe_bandwidth_result *r = NULL;
        EXPECT(ctx, gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
        assert_true(simcuda_faults_fired() > 0);
        assert_int_equal(get_last_error(), cudaSuccess);
        const char *s = NULL;
        assert_int_equal(gpuprobe_bandwidth_result_get_string(r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE,
                                                              &s), GPUPROBE_OK);
        int64_t degraded = imetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED);
        if (i < 2) {
            assert_contains(s, "the CUDA device attributes: 6144-bit bus x 3201 MHz");
            assert_near(dmetric(r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS), 4916.736, 1e-9);
        } else if (i < 4) {
            assert_int_equal(degraded, -1);
            assert_near(fig(r, GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, GPUPROBE_BANDWIDTH_PEAK_FRACTION),
                        i == 2 ? 0 : model_gbps(GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, 1048576) /
                                         (32.0 * 128 / 130 / 8 * 16), 1e-5);
        } else {
            assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES), 0);
            assert_int_equal(degraded, 0);
        }
        gpuprobe_bandwidth_result_destroy(r);
        assert_left_nothing(0);
        gpuprobe_bandwidth_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(figures_and_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(tests_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(degraded_link, setup, teardown),
        cmocka_unit_test_setup_teardown(automatic_size, setup, teardown),
        cmocka_unit_test_setup_teardown(check_catches_a_wrong_dot, setup, teardown),
        cmocka_unit_test_setup_teardown(failure_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(descriptions_optional, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
