/*
 * scenario_matmul.c - the GPU matmul of libgpuprobe (the shared library,
 * unmodified) on simulated GPUs: every precision at awkward shapes, with
 * work run at once and deferred to the synchronising calls; the negative
 * controls (a wrong gemm must fail verification); every CUDA and cuBLAS
 * call the matmul makes failing in turn; a sticky asynchronous fault; four
 * threads with their own contexts.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
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

static const char h200[] = "[gpu]\npreset = H200\n";
static const char two[] = "[gpu]\npreset = A100-40GB\n[gpu]\npreset = L4\n";

static const gpuprobe_dtype gpu_dtypes[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_TF32,
                                            GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16};
static const char *const compute_types[] = {"CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_32F_FAST_TF32",
                                            "CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_32F"};

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

static double dmetric(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    double v = -1;
    assert_int_equal(gpuprobe_matmul_result_get_double(r, m, &v), GPUPROBE_OK);
    return v;
}

static int64_t imetric(const gpuprobe_matmul_result *r, gpuprobe_matmul_metric m)
{
    int64_t v = -1;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, m, &v), GPUPROBE_OK);
    return v;
}

/* Nothing of a run is left but what the library keeps for later runs (its
 * handle's workspace, stream and events); nothing is left current. */
static void assert_run_left_nothing(int unit);
static void assert_left_nothing_but_current(int unit)
{
    simcuda_unit_state st = unit_state(unit);
    assert_int_equal(st.allocations, st.workspaces);
    assert_int_equal(st.pending_ops, 0);
    assert_int_equal(simcuda_pinned_count(), 0);
}

static void assert_run_left_nothing(int unit)
{
    simcuda_unit_state st = unit_state(unit);
    assert_int_equal(st.allocations, st.workspaces);
    assert_int_equal(st.pending_ops, 0);
    assert_int_equal(simcuda_pinned_count(), 0);
    CUcontext c = (CUcontext)(uintptr_t)1;
    assert_int_equal(get_current(&c), CUDA_SUCCESS);
    assert_null(c);
}

static gpuprobe_matmul_result *run(gpuprobe_context *ctx, size_t dev, int64_t m, int64_t n,
                                   int64_t k, gpuprobe_dtype dt, gpuprobe_status want)
{
    gpuprobe_matmul_options *o = mm_options(m, n, k, dt);
    int64_t lo = 0, hi = 0;
    assert_int_equal(gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_VERIFY_SAMPLES, &lo, &hi), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY_SAMPLES, m * n < hi ? m * n : hi),
                     GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, dev, o, 0, &r);
    gpuprobe_matmul_options_destroy(o);
    check_status(ctx, st, want, "gpuprobe_matmul_run");
    return r;
}

/* Every precision at non-square shapes, every entry verified; with the
 * work run at each call and with it deferred to the synchronising calls. */
static void precisions(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{37, 23, 71}, {129, 65, 33}, {1, 300, 7}, {5, 1, 1}};
    for (int deferred = 0; deferred < 2; deferred++) {
        fleet(h200);
        assert_int_equal(simcuda_set(deferred ? "mode = deferred" : "mode = eager"), 0);
        gpuprobe_context *ctx = new_ctx();
        for (size_t d = 0; d < sizeof gpu_dtypes / sizeof gpu_dtypes[0]; d++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                gpuprobe_matmul_result *r =
                    run(ctx, 1, shapes[s][0], shapes[s][1], shapes[s][2], gpu_dtypes[d], GPUPROBE_OK);
                assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 1);
                assert_true(dmetric(r, GPUPROBE_METRIC_MAX_ERROR) <= dmetric(r, GPUPROBE_METRIC_TOLERANCE));
                assert_int_equal(imetric(r, GPUPROBE_METRIC_RUNS), 2);
                assert_true(dmetric(r, GPUPROBE_METRIC_MEDIAN_S) > 0);
                assert_true(dmetric(r, GPUPROBE_METRIC_H2D_S) > 0);
                assert_true(dmetric(r, GPUPROBE_METRIC_D2H_S) > 0);
                const char *s1 = NULL;
                assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_COMPUTE_TYPE, &s1),
                                 GPUPROBE_OK);
                assert_string_equal(s1, compute_types[d]);
                assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_BACKEND, &s1),
                                 GPUPROBE_OK);
                assert_contains(s1, "cuBLAS 13.1.0 (cublasGemmEx");
                gpuprobe_matmul_result_destroy(r);
                assert_run_left_nothing(0);
            }
        assert_only_simulated_cuda();
        assert_int_equal(unit_state(0).blas_handles, 1); /* one per device, kept */
        gpuprobe_context_destroy(ctx);
    }
}

/* A simulated gemm that computes the wrong thing must fail verification:
 * otherwise these scenarios would prove nothing. */
static void negative_controls(void **state)
{
    (void)state;
    static const char *const bugs[] = {"gemm_bug = rowmajor", "gemm_bug = drop_last_k"};
    for (size_t b = 0; b < 2; b++) {
        fleet(h200);
        assert_int_equal(simcuda_set(bugs[b]), 0);
        gpuprobe_context *ctx = new_ctx();
        for (size_t d = 0; d < sizeof gpu_dtypes / sizeof gpu_dtypes[0]; d++) {
            gpuprobe_matmul_result *r = run(ctx, 1, 37, 23, 71, gpu_dtypes[d], GPUPROBE_ERR_VERIFY_FAILED);
            assert_non_null(r);
            assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 0);
            gpuprobe_matmul_result_destroy(r);
        }
        assert_int_equal(simcuda_set("gemm_bug = none"), 0);
        gpuprobe_matmul_result_destroy(run(ctx, 1, 37, 23, 71, GPUPROBE_DTYPE_FP32, GPUPROBE_OK));
        gpuprobe_context_destroy(ctx);
    }
}

/* A gemm that reports success but writes nothing to C: C was filled with
 * 0xFF bytes (NaN in fp32) before the first call, so every sampled entry
 * read back is NaN and the error says so, in every precision; neither
 * zeros nor any other number is left there to be compared. */
static void unwritten_result_is_nan(void **state)
{
    (void)state;
    fleet(h200);
    assert_int_equal(simcuda_set("gemm_bug = unwritten"), 0);
    gpuprobe_context *ctx = new_ctx();
    for (size_t d = 0; d < sizeof gpu_dtypes / sizeof gpu_dtypes[0]; d++) {
        gpuprobe_matmul_result *r = run(ctx, 1, 37, 23, 71, gpu_dtypes[d], GPUPROBE_ERR_VERIFY_FAILED);
        assert_non_null(r);
        assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 0);
        double err = dmetric(r, GPUPROBE_METRIC_MAX_ERROR);
        if (!isnan(err))
            fail_msg("%s: max error %g, want NaN", gpuprobe_dtype_name(gpu_dtypes[d]), err);
        gpuprobe_matmul_result_destroy(r);
    }
    assert_int_equal(simcuda_set("gemm_bug = none"), 0);
    gpuprobe_matmul_result_destroy(run(ctx, 1, 37, 23, 71, GPUPROBE_DTYPE_FP32, GPUPROBE_OK));
    gpuprobe_context_destroy(ctx);
}

/* Every CUDA and cuBLAS call a matmul makes, failing at each of its calls
 * in turn: a clean status naming the error, nothing left allocated or
 * current, and the next run on the same context succeeds. */
static void failure_sweep(void **state)
{
    (void)state;
    static const struct {
        const char *func;
        gpuprobe_status want;
        const char *named;
    } calls[] = {
        {"cuDeviceGet", GPUPROBE_ERR_CUDA, "CUDA_ERROR_UNKNOWN"},
        {"cuDevicePrimaryCtxRetain", GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        {"cuCtxPushCurrent_v2", GPUPROBE_ERR_CUDA, "CUDA_ERROR_UNKNOWN"},
        {"cudaStreamCreateWithFlags", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cublasCreate_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_NOT_INITIALIZED"},
        {"cublasSetStream_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cublasGetVersion_v2", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cublasSetMathMode", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cudaMemGetInfo", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaMallocHost", GPUPROBE_ERR_OUT_OF_MEMORY, "cudaErrorMemoryAllocation"},
        {"cudaMalloc", GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY, "cudaErrorMemoryAllocation"},
        {"cudaEventCreate", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaMemsetAsync", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaStreamSynchronize", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaEventRecord", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaMemcpyAsync", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cudaEventSynchronize", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        {"cublasGemmEx", GPUPROBE_ERR_CUDA, "CUBLAS_STATUS_EXECUTION_FAILED"},
        {"cudaEventElapsedTime", GPUPROBE_ERR_CUDA, "cudaErrorUnknown"},
        /* Last: a pop the driver refuses leaves the context current (no
         * one can take it off), so the current context is not checked. */
        {"cuCtxPopCurrent_v2", GPUPROBE_ERR_CUDA, "CUDA_ERROR_UNKNOWN"},
    };
    const size_t pop = sizeof calls / sizeof calls[0] - 1;
    int runs = 0;
    for (int deferred = 0; deferred < 2; deferred++)
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
            for (unsigned long nth = 1;; nth++) {
                fleet(h200);
                assert_int_equal(simcuda_set(deferred ? "mode = deferred" : "mode = eager"), 0);
                gpuprobe_context *ctx = new_ctx();
                size_t n = 0;
                EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
                assert_int_equal(simcuda_fail(calls[i].func, nth, 0, SIMCUDA_ONCE), 0);
                gpuprobe_matmul_options *o = mm_options(9, 5, 3, GPUPROBE_DTYPE_FP16);
                gpuprobe_matmul_result *r = NULL;
                gpuprobe_status st = gpuprobe_matmul_run(ctx, 1, o, 0, &r);
                runs++;
                if (simcuda_faults_fired() == 0) { /* no nth call: done */
                    check_status(ctx, st, GPUPROBE_OK, calls[i].func);
                    gpuprobe_matmul_result_destroy(r);
                    gpuprobe_matmul_options_destroy(o);
                    gpuprobe_context_destroy(ctx);
                    assert_true(nth > 1); /* every call here is made at least once */
                    break;
                }
                print_message("%s %s #%lu: %s\n", deferred ? "deferred" : "eager", calls[i].func,
                              nth, gpuprobe_last_error(ctx));
                check_status(ctx, st, calls[i].want, calls[i].func);
                assert_null(r);
                assert_contains(gpuprobe_last_error(ctx), calls[i].named);
                /* The runtime's last error is the application's: the
                 * library's failed call does not show there. */
                assert_int_equal(get_last_error(), cudaSuccess);
                if (i == pop)
                    assert_left_nothing_but_current(0);
                else
                    assert_run_left_nothing(0);
                simcuda_clear_faults();
                assert_int_equal(gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
                assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 1);
                gpuprobe_matmul_result_destroy(r);
                gpuprobe_matmul_options_destroy(o);
                gpuprobe_context_destroy(ctx);
                simcuda_unit_state us = unit_state(0);
                assert_int_equal(us.blas_handles + us.streams + us.events + us.allocations, 0);
            }
    print_message("%d runs\n", runs);
}

/* A failed run waits for its stream before freeing the buffers; when that
 * wait fails too, the run still reports the first failure, and the
 * runtime's last error (the application's) is left clear. The failing
 * wait is the last stream synchronisation of a run whose gemm fails,
 * counted in a run with the gemm failure alone. */
static void failed_run_wait_fails(void **state)
{
    (void)state;
    size_t syncs = 0;
    for (int pass = 0; pass < 2; pass++) {
        fleet(h200);
        gpuprobe_context *ctx = new_ctx();
        size_t n = 0;
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(simcuda_fail("cublasGemmEx", 1, 0, SIMCUDA_ONCE), 0);
        if (pass == 1)
            assert_int_equal(simcuda_fail("cudaStreamSynchronize", syncs, 0, SIMCUDA_ONCE), 0);
        simcuda_log_clear();
        gpuprobe_matmul_options *o = mm_options(9, 5, 3, GPUPROBE_DTYPE_FP32);
        gpuprobe_matmul_result *r = NULL;
        check_status(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_CUDA,
                     "gpuprobe_matmul_run");
        assert_null(r);
        assert_contains(gpuprobe_last_error(ctx), "cublasGemmEx");
        assert_contains(gpuprobe_last_error(ctx), "CUBLAS_STATUS_EXECUTION_FAILED");
        if (pass == 0) {
            syncs = simcuda_log_count("cudaStreamSynchronize", SIMCUDA_ANY);
            assert_true(syncs >= 2); /* the buffers' fill, and the release */
            assert_int_equal(simcuda_faults_fired(), 1);
        } else {
            assert_int_equal(simcuda_faults_fired(), 2);
        }
        assert_int_equal(get_last_error(), cudaSuccess);
        assert_run_left_nothing(0);
        simcuda_clear_faults();
        assert_int_equal(gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
        assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 1);
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
}

/* Codes the libraries have no name for: the message carries the name the
 * library itself gives ("unrecognized error code" from cudaGetErrorName,
 * as the runtime documents; "CUBLAS_STATUS_UNKNOWN" from the simulated
 * cublasGetStatusName), not the library's own fallback wording. */
static void unnamed_codes(void **state)
{
    (void)state;
    static const struct {
        const char *func;
        const char *named;
    } cases[] = {
        {"cudaMalloc", "unrecognized error code"},
        {"cublasGemmEx", "CUBLAS_STATUS_UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fleet(h200);
        gpuprobe_context *ctx = new_ctx();
        size_t n = 0;
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(simcuda_fail(cases[i].func, 1, 4242, SIMCUDA_ONCE), 0);
        gpuprobe_matmul_result *r = run(ctx, 1, 9, 5, 3, GPUPROBE_DTYPE_FP32, GPUPROBE_ERR_CUDA);
        assert_null(r);
        assert_contains(gpuprobe_last_error(ctx), cases[i].func);
        assert_contains(gpuprobe_last_error(ctx), cases[i].named);
        assert_run_left_nothing(0);
        gpuprobe_context_destroy(ctx);
        simcuda_clear_faults();
    }
}

/* A kernel fault (cudaErrorIllegalAddress, raised asynchronously by the
 * third gemm) poisons the device's context for good, as on a GPU: the run
 * fails with the error named, later work on that device fails the same
 * way, the other device is unaffected. */
static void sticky_fault(void **state)
{
    (void)state;
    for (int deferred = 0; deferred < 2; deferred++) {
        fleet(two);
        assert_int_equal(simcuda_set(deferred ? "mode = deferred" : "mode = eager"), 0);
        assert_int_equal(simcuda_fault_async("cublasGemmEx", 3), 0);
        gpuprobe_context *ctx = new_ctx();
        gpuprobe_matmul_result *r = run(ctx, 1, 16, 8, 4, GPUPROBE_DTYPE_FP32, GPUPROBE_ERR_CUDA);
        assert_null(r);
        assert_contains(gpuprobe_last_error(ctx), "cudaErrorIllegalAddress");
        assert_int_equal(unit_state(0).faulted, cudaErrorIllegalAddress);
        r = run(ctx, 1, 16, 8, 4, GPUPROBE_DTYPE_FP32, GPUPROBE_ERR_CUDA);
        assert_contains(gpuprobe_last_error(ctx), "cudaErrorIllegalAddress");
        /* NVML still reads the device's memory (the poisoned context is
         * this process's); through the context, the fault shows. */
        gpuprobe_context *other = new_ctx();
        gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
        EXPECT(other, gpuprobe_device_memory(other, 1, &m, 0), GPUPROBE_OK);
        assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
        assert_int_equal(m.context_held, 1);
        gpuprobe_context_destroy(other);
        setenv("GPUPROBE_NVML", "off", 1);
        other = new_ctx();
        unsetenv("GPUPROBE_NVML");
        EXPECT(other, gpuprobe_device_memory(other, 1, &m, 0), GPUPROBE_ERR_CUDA);
        assert_contains(gpuprobe_last_error(other), "CUDA_ERROR_ILLEGAL_ADDRESS");
        r = run(other, 2, 16, 8, 4, GPUPROBE_DTYPE_FP32, GPUPROBE_OK);
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_context_destroy(other);
        gpuprobe_context_destroy(ctx);
        CUcontext c = (CUcontext)(uintptr_t)1;
        assert_int_equal(get_current(&c), CUDA_SUCCESS);
        assert_null(c);
        simcuda_clear_faults();
    }
}

/* Asking more than the device has: a clean DEVICE_OUT_OF_MEMORY, and an
 * architecture cuBLAS does not support: UNSUPPORTED; nothing left behind. */
static void refusals(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = T4\ntotal = 700MiB\n[gpu]\npreset = K80\n");
    gpuprobe_context *ctx = new_ctx();
    assert_null(run(ctx, 1, 4096, 4096, 4096, GPUPROBE_DTYPE_FP32, GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY));
    assert_contains(gpuprobe_last_error(ctx), "free of");
    assert_contains(gpuprobe_last_error(ctx), "plus 64 MiB for cuBLAS"); /* the headroom */
    /* 3 x 4096^2 x 4 bytes, in bytes and MiB */
    assert_contains(gpuprobe_last_error(ctx), "needs 201326592 bytes (192.0 MiB) of device memory");
    assert_run_left_nothing(0);
    assert_null(run(ctx, 2, 16, 8, 4, GPUPROBE_DTYPE_FP32, GPUPROBE_ERR_UNSUPPORTED));
    assert_contains(gpuprobe_last_error(ctx), "CUBLAS_STATUS_ARCH_MISMATCH");
    assert_run_left_nothing(1);
    /* fp64 is the CPU's: refused before anything is made on the GPU. */
    simcuda_log_clear();
    assert_null(run(ctx, 1, 16, 8, 4, GPUPROBE_DTYPE_FP64, GPUPROBE_ERR_UNSUPPORTED));
    assert_contains(gpuprobe_last_error(ctx),
                    "matmul in fp64 is done on the CPU only; CUDA devices do fp32, tf32, fp16 and bf16");
    assert_int_equal(simcuda_log_count("cudaMalloc", SIMCUDA_ANY), 0);
    gpuprobe_context_destroy(ctx);
}

/* The timing protocol where time is exact: the simulation charges a gemm
 * 5 us plus its FLOP at the board's rate (and nothing for an event), so a
 * 16 x 8 x 4 fp32 call costs 5.00000 us and the automatic batch follows
 * from the rule alone. Calibration from one call: 1 (5 us, short), then
 * min(1.25 x 2 ms / 5 us, 100 x 1) = 100 (0.5 ms, short), then 500
 * (2.5 ms): 500 calls a run. No search for the steady state here
 * (steady_state_on_a_gpu has it). With BUDGET_MS 51 and no cap on the
 * runs, the runs stop at 21 (52.5 ms timed). Every gemm is counted: 1
 * warm-up + 1 + 100 + 500 + 21 x 500 = 11102. An explicit batch of 7
 * with exactly 3 runs and no budget: 1 + 3 x 7 = 22 calls, no
 * calibration; without the warm-up call 21. Every block (warm-up,
 * calibration, run) and each copy (A and B up, C down) is timed between
 * two events of its own. */
static void autorange_on_a_gpu(void **state)
{
    (void)state;
    fleet(h200);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 16), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 8), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 4), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 51), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS, 0), GPUPROBE_OK);
    simcuda_log_clear();
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_BATCH), 500);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_RUNS), 21);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_STEADY), -1);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_WARMUP_RUNS), 0);
    assert_int_equal(simcuda_log_count("cublasGemmEx", SIMCUDA_ANY), 11102);
    assert_int_equal(simcuda_log_count("cudaEventRecord", SIMCUDA_ANY), 2 * (2 + 1 + 3 + 21));
    /* The untimed calls: 5 us x (1 + 1 + 100 + 500), to the events'
     * precision (the simulated clock's float milliseconds). */
    assert_true(fabs(dmetric(r, GPUPROBE_METRIC_WARMUP_S) - 602 * 5e-6) < 1e-4 * 602 * 5e-6);
    assert_true(dmetric(r, GPUPROBE_METRIC_IQR_S) < 1e-9);
    /* Per call, not per run; the events' float milliseconds round a little. */
    assert_true(fabs(dmetric(r, GPUPROBE_METRIC_MEDIAN_S) - 5e-6) < 1e-9);
    assert_true(fabs(dmetric(r, GPUPROBE_METRIC_MIN_S) - 5e-6) < 1e-9);
    assert_true(fabs(dmetric(r, GPUPROBE_METRIC_MAX_S) - 5e-6) < 1e-9);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 1);
    gpuprobe_matmul_result_destroy(r);

    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 7), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 3), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 3), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 0), GPUPROBE_OK);
    simcuda_log_clear();
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_BATCH), 7);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_RUNS), 3);
    assert_int_equal(simcuda_log_count("cublasGemmEx", SIMCUDA_ANY), 22);
    assert_int_equal(simcuda_log_count("cudaEventRecord", SIMCUDA_ANY), 2 * (2 + 1 + 3));
    gpuprobe_matmul_result_destroy(r);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP, 0), GPUPROBE_OK);
    simcuda_log_clear();
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_int_equal(simcuda_log_count("cublasGemmEx", SIMCUDA_ANY), 21);
    assert_int_equal(simcuda_log_count("cudaEventRecord", SIMCUDA_ANY), 2 * (2 + 3));
    gpuprobe_matmul_result_destroy(r);

    /* A call of 8 ms or more (the warm-up shows it): one call a run, no
     * calibration: 1 + 5 calls. On a board of 0.1 GFLOP/s a 128^3 call
     * (4.2 MFLOP) lasts 42 ms. */
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    fleet("[gpu]\npreset = H200\ntflops = 0.0001\n");
    ctx = new_ctx();
    o = mm_options(128, 128, 128, GPUPROBE_DTYPE_FP32);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 5), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 5), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY, 0), GPUPROBE_OK);
    simcuda_log_clear();
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_true(dmetric(r, GPUPROBE_METRIC_MEDIAN_S) >= 0.008);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_BATCH), 1);
    assert_int_equal(simcuda_log_count("cublasGemmEx", SIMCUDA_ANY), 6);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* A run on cuda:0 with the automatic batch, no budget and no search for
 * the steady state (two timed runs after the calibration): the batch it
 * chose, every gemm call counted, and the time per call.
 * The result, for the caller to read further and destroy. */
static gpuprobe_matmul_result *auto_batch_run(gpuprobe_context *ctx, int m, int n, int k,
                                              int64_t batch, int calls, double call_s)
{
    gpuprobe_matmul_options *o = mm_options(m, n, k, GPUPROBE_DTYPE_FP32);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, 0), GPUPROBE_OK);
    simcuda_log_clear();
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_options_destroy(o);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_BATCH), batch);
    assert_int_equal(imetric(r, GPUPROBE_METRIC_RUNS), 2);
    assert_int_equal(simcuda_log_count("cublasGemmEx", SIMCUDA_ANY), calls);
    assert_true(fabs(dmetric(r, GPUPROBE_METRIC_MEDIAN_S) - call_s) < call_s * 1e-6);
    return r;
}

/* The automatic batch grows at least twofold a step: on a board of
 * 1 GFLOP/s a 22 x 25 x 10 fp32 call (11000 FLOP) costs 5 + 11 = 16 us.
 * Calibration: 1 call (16 us, short), then min(ceil(1.25 x 2 ms / 16 us),
 * 100 x 1) = 100 (1.6 ms, short), then ceil(1.25 x 2 ms / 16 us) = 157,
 * below twice 100: 200 (3.2 ms). Two timed runs of 200:
 * 1 + 1 + 100 + 200 + 2 x 200 = 702 calls. A block the rate asks for that
 * is twice the last or more is kept as it is: a 10 x 15 x 20 call (6000
 * FLOP) costs 11 us, so 1, 100 (1.1 ms), then ceil(1.25 x 2 ms / 11 us) =
 * 228 (2.5 ms): 1 + 1 + 100 + 228 + 2 x 228 = 786 calls. The peak of the same run is the board's: clock x
 * SMs x fp32 FLOP per clock per SM (H200: 1980 MHz, 132 SMs, 256), and
 * in fp16 (4096 per clock per SM) sixteen times that. */
static void growth_and_peak_on_a_gpu(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\ntflops = 0.001\n");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_result *r = auto_batch_run(ctx, 22, 25, 10, 200, 702, 16e-6);
    const double fp32_peak = 1980000.0 * 1e3 * 132.0 * 256.0 / 1e9; /* 66908.16 GFLOP/s */
    assert_true(dmetric(r, GPUPROBE_METRIC_PEAK_GFLOPS) == fp32_peak);
    assert_true(dmetric(r, GPUPROBE_METRIC_PEAK_FRACTION) ==
                dmetric(r, GPUPROBE_METRIC_GFLOPS) / fp32_peak);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_result_destroy(auto_batch_run(ctx, 10, 15, 20, 228, 786, 11e-6));

    gpuprobe_matmul_options *o = mm_options(22, 25, 10, GPUPROBE_DTYPE_FP16);
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    assert_true(dmetric(r, GPUPROBE_METRIC_PEAK_GFLOPS) == 1980000.0 * 1e3 * 132.0 * 4096.0 / 1e9);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* The automatic batch grows at most a hundredfold a step: with no fixed
 * cost (gemm_launch_ns = 0), a 5 x 4 x 3 call (120 FLOP at 1 GFLOP/s)
 * costs 0.12 us. Calibration: 1, then 100 (12 us), where the rate asks
 * for ceil(1.25 x 2 ms / 0.12 us) = 20834: 10000 (1.2 ms), then 20834
 * (2.5 ms). Two timed runs: 1 + 1 + 100 + 10000 + 3 x 20834 = 72604
 * calls. */
static void growth_capped_on_a_gpu(void **state)
{
    (void)state;
    fleet("gemm_launch_ns = 0\n[gpu]\npreset = H200\ntflops = 0.001\n");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_result_destroy(auto_batch_run(ctx, 5, 4, 3, 20834, 72604, 0.12e-6));
    gpuprobe_context_destroy(ctx);
}

/* A warm-up call of 8 ms or more (four samples' worth) needs no
 * calibration: one call a sample. On a board of 1 GFLOP/s a 165^3 fp32
 * call costs 5 us + 8.98425 ms: 1 warm-up + 2 runs of 1 = 3 calls; a
 * 152^3 call (5 us + 7.023616 ms) is calibrated first (one call, already
 * longer than a sample): 4 calls. */
static void slow_call_not_calibrated(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\ntflops = 0.001\n");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_result_destroy(
        auto_batch_run(ctx, 165, 165, 165, 1, 3, 5e-6 + 2.0 * 165 * 165 * 165 / 1e9));
    gpuprobe_matmul_result_destroy(
        auto_batch_run(ctx, 152, 152, 152, 1, 4, 5e-6 + 2.0 * 152 * 152 * 152 / 1e9));
    gpuprobe_context_destroy(ctx);
}

/* The search for the steady state on a device that warms up slowly: its
 * first 30000 gemms cost up to 1.5 times the model (gemm_ramp 0.5), the
 * c-th 5 us x (1 + 0.5 (30000 - c) / 30000) for a 16 x 8 x 4 call. In
 * blocks of 90 calls (call 0 is the warm-up call) each block is 0.1%
 * faster than the one before while the ramp lasts (block 333): two blocks
 * in a row always agree. Windows of 50 ms or more do not: their medians
 * are 648.7, 593.7, 533.2 and 465.4 us (windows of 78, 85, 94 and 107
 * blocks, the last holding the ramp's end), then 450 and 450 us (112
 * blocks each, the flat 5 us a call), which agree: 588 warm-up runs,
 * 302.107 ms in all with the warm-up call, and the timed runs at 5 us a
 * call. With a bound of 10 ms the ramp is on when the bound comes: 14
 * blocks make 9.391 ms, and a fifteenth as long as the fourteenth would
 * end past it; not steady, and the timed runs (blocks 14 and 15) are
 * 7.387 us a call. (Figures from the model, the events' float
 * milliseconds included.) A gemm that fails during the search fails the
 * run. Nothing of any run is left. */
static void steady_state_on_a_gpu(void **state)
{
    (void)state;
    const char ramp[] = "gemm_ramp = 0.5\ngemm_ramp_calls = 30000\n[gpu]\npreset = H200\n";
    for (int bounded = 0; bounded < 3; bounded++) {
        fleet(ramp);
        gpuprobe_context *ctx = new_ctx();
        gpuprobe_matmul_options *o = mm_options(16, 8, 4, GPUPROBE_DTYPE_FP32);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 90), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS,
                                                     bounded == 1 ? 10 : 1000), GPUPROBE_OK);
        simcuda_log_clear();
        gpuprobe_matmul_result *r = NULL;
        if (bounded == 2) {
            /* The 20000th gemm: block 222 of the search. */
            assert_int_equal(simcuda_fail("cublasGemmEx", 20000, 0, SIMCUDA_ONCE), 0);
            EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_CUDA);
            assert_null(r);
            assert_contains(gpuprobe_last_error(ctx), "CUBLAS_STATUS_EXECUTION_FAILED");
            simcuda_clear_faults();
        } else {
            EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
            int64_t blocks = bounded ? 14 : 588;
            assert_int_equal(imetric(r, GPUPROBE_METRIC_STEADY), bounded ? 0 : 1);
            assert_int_equal(imetric(r, GPUPROBE_METRIC_WARMUP_RUNS), blocks);
            assert_int_equal(simcuda_log_count("cublasGemmEx", SIMCUDA_ANY), 1 + (blocks + 2) * 90);
            double warm = bounded ? 9.391326e-3 : 302.107177e-3;
            assert_true(fabs(dmetric(r, GPUPROBE_METRIC_WARMUP_S) - warm) < 1e-5 * warm);
            double median = bounded ? 7.387481e-6 : 5.000015e-6;
            assert_true(fabs(dmetric(r, GPUPROBE_METRIC_MEDIAN_S) - median) < 1e-5 * median);
            assert_int_equal(imetric(r, GPUPROBE_METRIC_VERIFIED), 1);
            gpuprobe_matmul_result_destroy(r);
        }
        gpuprobe_matmul_options_destroy(o);
        assert_run_left_nothing(0);
        gpuprobe_context_destroy(ctx);
    }
}

/* One context that ran on two GPUs gives back each one's cuBLAS handle,
 * stream and events when it is destroyed (each inside its own device's
 * context), and no memory of its own stays allocated on either. */
static void two_gpus_released(void **state)
{
    (void)state;
    fleet(two);
    gpuprobe_context *ctx = new_ctx();
    /* 1, 2, then 2 and 1 again: a device used before is not entered anew. */
    static const size_t order[] = {1, 2, 2, 1};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        gpuprobe_matmul_result_destroy(run(ctx, order[i], 12, 10, 8, GPUPROBE_DTYPE_FP32, GPUPROBE_OK));
    for (int unit = 0; unit < 2; unit++) {
        simcuda_unit_state us = unit_state(unit);
        assert_int_equal(us.blas_handles, 1);
        assert_int_equal(us.streams, 1);
        assert_int_equal(us.events, 2);
        assert_int_equal(us.context_refs, 2); /* the library's one and the runtime's */
    }
    simcuda_log_clear();
    gpuprobe_context_destroy(ctx);
    for (int unit = 0; unit < 2; unit++) {
        simcuda_unit_state us = unit_state(unit);
        assert_int_equal(us.blas_handles + us.streams + us.events + us.allocations, 0);
    }
    /* Each handle, stream and event destroyed with its own device's
     * context current. */
    size_t destroyed = 0;
    for (size_t i = 0; i < simcuda_log_size(); i++) {
        simcuda_call e;
        assert_int_equal(simcuda_log_entry(i, &e), 0);
        if (strcmp(e.func, "cublasDestroy_v2") != 0 && strcmp(e.func, "cudaStreamDestroy") != 0 &&
            strcmp(e.func, "cudaEventDestroy") != 0)
            continue;
        destroyed++;
        /* the first device used is GPU 0, destroyed first */
        int want = destroyed <= 4 ? 0 : 1;
        if (e.gpu != want)
            fail_msg("%s (#%zu) ran in GPU %d's context, want %d", e.func, destroyed, e.gpu, want);
    }
    assert_int_equal(destroyed, 8); /* per GPU: 2 events, a handle, a stream */
}

/* What a result says of the computation: the cuBLAS version that
 * cublasGetVersion reports (major * 10000 + minor * 100 + patch, each part
 * at an edge: 13.0.2, 12.99.99), the types, and the math mode with the
 * environment variables that change what cuBLAS does behind it, their
 * values quoted (at most 8 characters). */
static void described(void **state)
{
    (void)state;
    static const struct {
        const char *config, *backend;
    } versions[] = {
        {"", "cuBLAS 13.1.0 (cublasGemmEx, A/B CUDA_R_16F, C CUDA_R_32F)"},
        {"cublas_version = 130002\n", "cuBLAS 13.0.2 (cublasGemmEx, A/B CUDA_R_16F, C CUDA_R_32F)"},
        {"cublas_version = 129999\n", "cuBLAS 12.99.99 (cublasGemmEx, A/B CUDA_R_16F, C CUDA_R_32F)"},
    };
    static const struct {
        const char *tf32, *emulate, *math;
    } modes[] = {
        {NULL, NULL, "CUBLAS_DEFAULT_MATH"},
        {NULL, "1", "CUBLAS_DEFAULT_MATH; CUBLAS_EMULATE_SINGLE_PRECISION=1"},
        {"0", NULL, "CUBLAS_DEFAULT_MATH; NVIDIA_TF32_OVERRIDE=0"},
        {"0", "123456789",
         "CUBLAS_DEFAULT_MATH; NVIDIA_TF32_OVERRIDE=0; CUBLAS_EMULATE_SINGLE_PRECISION=12345678..."},
        {"123456789", "12345678",
         "CUBLAS_DEFAULT_MATH; NVIDIA_TF32_OVERRIDE=12345678...; CUBLAS_EMULATE_SINGLE_PRECISION=12345678"},
        {"12345678", NULL, "CUBLAS_DEFAULT_MATH; NVIDIA_TF32_OVERRIDE=12345678"},
    };
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        char text[128];
        snprintf(text, sizeof text, "%s%s", versions[v].config, h200);
        fleet(text);
        gpuprobe_context *ctx = new_ctx();
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            if (modes[m].tf32)
                setenv("NVIDIA_TF32_OVERRIDE", modes[m].tf32, 1);
            if (modes[m].emulate)
                setenv("CUBLAS_EMULATE_SINGLE_PRECISION", modes[m].emulate, 1);
            gpuprobe_matmul_result *r = run(ctx, 1, 9, 5, 3, GPUPROBE_DTYPE_FP16, GPUPROBE_OK);
            unsetenv("NVIDIA_TF32_OVERRIDE");
            unsetenv("CUBLAS_EMULATE_SINGLE_PRECISION");
            const char *s = NULL;
            assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_BACKEND, &s), GPUPROBE_OK);
            assert_string_equal(s, versions[v].backend);
            assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_MATH_MODE, &s), GPUPROBE_OK);
            assert_string_equal(s, modes[m].math);
            gpuprobe_matmul_result_destroy(r);
        }
        gpuprobe_context_destroy(ctx);
    }
}

/* Whether a library whose file name is base is mapped in this process. */
static int find_object(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    const char *path = info->dlpi_name ? info->dlpi_name : "";
    const char *slash = strrchr(path, '/');
    return strcmp(slash ? slash + 1 : path, (const char *)base) == 0;
}

/* cuBLAS, once a handle was created, has state of its own (threads, exit
 * handlers): gpuprobe_context_destroy() leaves it mapped. This program never
 * opens cuBLAS itself, so only the library's handle could keep it. */
static void cublas_stays_loaded(void **state)
{
    (void)state;
    fleet(h200);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_result_destroy(run(ctx, 1, 9, 5, 3, GPUPROBE_DTYPE_FP32, GPUPROBE_OK));
    gpuprobe_context_destroy(ctx);
    assert_int_not_equal(dl_iterate_phdr(find_object, (void *)"libcublas.so.13"), 0);
}

typedef struct worker {
    int index;
    char error[512];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK) {
        snprintf(w->error, sizeof w->error, "context_create failed");
        return NULL;
    }
    size_t dev = 1 + (size_t)(w->index % 2);
    for (int i = 0; i < 3 && !w->error[0]; i++) {
        gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
        gpuprobe_matmul_options *o = NULL;
        gpuprobe_matmul_result *r = NULL;
        int64_t verified = 0;
        gpuprobe_status st = gpuprobe_device_memory(ctx, dev, &m, 0);
        if (st == GPUPROBE_OK && gpuprobe_matmul_options_create(&o) == GPUPROBE_OK) {
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 24 + w->index);
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 17);
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 31 - i);
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, gpu_dtypes[(w->index + i) % 4]);
            gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 2);
            st = gpuprobe_matmul_run(ctx, dev, o, 0, &r);
            if (st == GPUPROBE_OK)
                gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_VERIFIED, &verified);
        }
        CUcontext c = (CUcontext)(uintptr_t)1;
        if (st != GPUPROBE_OK || verified != 1)
            snprintf(w->error, sizeof w->error, "thread %d run %d: %s: %s", w->index, i,
                     gpuprobe_status_name(st), gpuprobe_last_error(ctx));
        else if (get_current(&c) != CUDA_SUCCESS || c != NULL)
            snprintf(w->error, sizeof w->error, "thread %d: a context was left current", w->index);
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o);
    }
    gpuprobe_context_destroy(ctx);
    return NULL;
}

/* Four threads, each with its own gpuprobe context, two per GPU. */
static void four_threads(void **state)
{
    (void)state;
    fleet(two);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].index = i;
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (w[i].error[0])
            fail_msg("%s", w[i].error);
    }
    for (int u = 0; u < 2; u++) {
        simcuda_unit_state st = unit_state(u);
        assert_int_equal(st.blas_handles + st.streams + st.events + st.allocations, 0);
        assert_int_equal(st.context_refs, 1); /* the runtime's */
    }
    assert_int_equal(simcuda_pinned_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(precisions, setup, teardown),
        cmocka_unit_test_setup_teardown(negative_controls, setup, teardown),
        cmocka_unit_test_setup_teardown(unwritten_result_is_nan, setup, teardown),
        cmocka_unit_test_setup_teardown(failure_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_run_wait_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(sticky_fault, setup, teardown),
        cmocka_unit_test_setup_teardown(unnamed_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(autorange_on_a_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(steady_state_on_a_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(growth_and_peak_on_a_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(growth_capped_on_a_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(slow_call_not_calibrated, setup, teardown),
        cmocka_unit_test_setup_teardown(two_gpus_released, setup, teardown),
        cmocka_unit_test_setup_teardown(four_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(described, setup, teardown),
        cmocka_unit_test_setup_teardown(cublas_stays_loaded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
