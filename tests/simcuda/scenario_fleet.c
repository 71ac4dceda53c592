/*
 * scenario_fleet.c - libgpuprobe (the shared library, unmodified) against
 * simulated fleets: one H200 (memory through NVML, no context; the context
 * fallback with NVML off); two heterogeneous GPUs (selection, which
 * devices get a context); CUDA_VISIBLE_DEVICES (empty, an index, UUIDs, a
 * list cut by an invalid entry, a MIG instance); the caller's current
 * context; what stays alive after gpuprobe_context_destroy().
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

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "scenario.h"

#define UUID_A "GPU-5e1e0000-a100-4000-8000-00000000000a"
#define UUID_H "GPU-5e1e0000-4200-4000-8000-00000000000b"
#define H200_TOTAL UINT64_C(150754820096)
#define A100_TOTAL UINT64_C(42505273344)

static const char one_h200[] =
    "[gpu]\npreset = H200\nuuid = " UUID_H "\npci = 0000:19:00.0\n";
/* Listed (and numbered by CUDA) A100 first; the H200 has more free memory. */
static const char two_gpus[] =
    "[gpu]\npreset = A100-40GB\nuuid = " UUID_A "\npci = 0000:21:00.0\nfree = 30GiB\n"
    "[gpu]\npreset = H200\nuuid = " UUID_H "\npci = 0000:81:00.0\nfree = 120GiB\n";

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    return 0;
}

static const char *str_attr(gpuprobe_context *ctx, size_t dev, gpuprobe_attr a)
{
    const char *s = NULL;
    EXPECT(ctx, gpuprobe_device_get_string(ctx, dev, a, &s), GPUPROBE_OK);
    return s;
}

static int64_t int_attr(gpuprobe_context *ctx, size_t dev, gpuprobe_attr a)
{
    int64_t v = -1;
    EXPECT(ctx, gpuprobe_device_get_int(ctx, dev, a, &v), GPUPROBE_OK);
    return v;
}

static CUcontext current_context(void)
{
    CUcontext c = (CUcontext)(uintptr_t)1;
    CUresult (*get)(CUcontext *) = CUDA_FN(CUresult (*)(CUcontext *), "libcuda.so.1", "cuCtxGetCurrent");
    assert_int_equal(get(&c), CUDA_SUCCESS);
    return c;
}

/* One H200: what the library reports is what the board is. Its memory
 * comes from NVML: no CUDA context, no device memory, nothing current;
 * capacity reserves the context a program will need. With NVML turned off,
 * the stated fallback creates the device's context (said in the CUDA
 * detail and the result), and destroying the gpuprobe context gives it
 * back. */
static void one_h200_probe(void **state)
{
    (void)state;
    fleet(one_h200);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_only_simulated_cuda();
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_AVAILABLE);
    assert_contains(detail, "1 CUDA device(s); driver supports CUDA 13.0, runtime 13.0");
    assert_null(strstr(detail, "NVML"));
    int v = 0;
    EXPECT(ctx, gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 13000);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_NAME), "NVIDIA H200");
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_SPEC), "cuda:0");
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), UUID_H);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_PCI_BUS_ID), "0000:19:00.0");
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_CC_MAJOR), 9);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_CC_MINOR), 0);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MULTIPROCESSORS), 132);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_CLOCK_KHZ), 1980000);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MEMORY_CLOCK_KHZ), 3201000);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MEMORY_BUS_BITS), 6144);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_TOTAL_MEMORY), (int64_t)H200_TOTAL);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX), 0);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 0);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_MODE), 0);
    /* Enumeration creates no context. */
    assert_false(unit_state(0).context_active);

    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.total_bytes, H200_TOTAL);
    assert_int_equal(m.available_bytes, H200_TOTAL);
    assert_int_equal(m.used_bytes, 0);
    assert_int_equal(m.flags, 0);
    assert_int_equal(m.context_bytes, 0);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(m.context_held, 0);
    assert_null(current_context());
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    EXPECT(ctx, gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
           GPUPROBE_OK);
    /* Free was read without a context: the one a program needs is
     * reserved, at the default (nothing measured it). */
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_DEFAULT);
    assert_int_equal(cap.reserve_bytes, GPUPROBE_DEFAULT_CONTEXT_RESERVE);
    /* ... in whole 2 MiB pages, less the allowance (total / 1024, rounded
     * up to a page: 142 MiB) */
    uint64_t allowance = 142 * MiB;
    assert_int_equal(cap.usable_bytes,
                     (H200_TOTAL - GPUPROBE_DEFAULT_CONTEXT_RESERVE) / (2 * MiB) * (2 * MiB) - allowance);
    simcuda_unit_state st = unit_state(0);
    assert_false(st.context_active);
    assert_int_equal(st.contexts_created, 0);
    assert_int_equal(st.bytes_allocated, 0);
    assert_int_equal(simcuda_log_count("cuDevicePrimaryCtxRetain", SIMCUDA_ANY), 0);
    assert_int_equal(simcuda_log_count("cuMemGetInfo_v2", SIMCUDA_ANY), 0);
    assert_int_equal(simcuda_log_count("cudaSetDevice", SIMCUDA_ANY), 0);
    /* Found by UUID, never by PCI bus id. */
    assert_true(simcuda_log_count("nvmlDeviceGetHandleByUUID", SIMCUDA_ANY) > 0);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetHandleByPciBusId_v2", SIMCUDA_ANY), 0);
    assert_int_equal(simcuda_nvml_refs(), 1);
    gpuprobe_context_destroy(ctx);
    assert_int_equal(simcuda_nvml_refs(), 0);

    /* NVML off: the fallback, stated. */
    simcuda_log_clear();
    setenv("GPUPROBE_NVML", "off", 1);
    ctx = new_ctx();
    unsetenv("GPUPROBE_NVML");
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_AVAILABLE);
    assert_contains(detail, "; NVML is not usable (GPUPROBE_NVML turns NVML off): GPU memory "
                            "is read through a CUDA context");
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "cannot be read without a CUDA context");
    assert_contains(gpuprobe_last_error(ctx), "GPUPROBE_NVML turns NVML off");
    assert_false(unit_state(0).context_active);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.available_bytes, H200_TOTAL - 500 * MiB);
    assert_int_equal(m.flags, GPUPROBE_MEMORY_CREATED_CONTEXT); /* nothing can measure it */
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT);
    assert_int_equal(m.context_held, 1);
    st = unit_state(0);
    assert_true(st.context_active);
    assert_int_equal(st.context_refs, 1);
    assert_false(st.runtime_holds); /* the driver API only: no runtime context */
    assert_null(current_context()); /* nothing left current on this thread */
    /* Again: no new context. */
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.flags, 0);
    assert_int_equal(unit_state(0).context_refs, 1);
    EXPECT(ctx, gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
           GPUPROBE_OK);
    /* Read inside the context this process now holds: nothing more. */
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_CONTEXT_HELD);
    assert_int_equal(cap.reserve_bytes, 0);
    assert_int_equal(cap.usable_bytes, (H200_TOTAL - 500 * MiB) / (2 * MiB) * (2 * MiB) - allowance);
    assert_int_equal(cap.max_params, cap.usable_bytes / 2);
    assert_int_equal(simcuda_nvml_refs(), 0); /* never loaded */
    assert_int_equal(simcuda_log_count("nvmlInit_v2", SIMCUDA_ANY), 0);
    int64_t x = 0;
    EXPECT(ctx, gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_TEMPERATURE_C, &x),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "NVML is not usable: GPUPROBE_NVML turns NVML off");
    gpuprobe_context_destroy(ctx);
    st = unit_state(0);
    assert_false(st.context_active); /* released: its memory is free again */
    assert_int_equal(st.free_bytes, H200_TOTAL);
}

/* auto and cuda pick the GPU with the most free memory; cuda:1 and
 * requirements are honoured. */
static void two_gpus_selection(void **state)
{
    (void)state;
    fleet(two_gpus);
    gpuprobe_context *ctx = new_ctx();
    size_t dev = 0;
    const char *why = NULL;
    EXPECT(ctx, gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why), GPUPROBE_OK);
    assert_int_equal(dev, 2);
    assert_contains(why, "cuda:1 (NVIDIA H200) has the most free memory");
    EXPECT(ctx, gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why), GPUPROBE_OK);
    assert_int_equal(dev, 2);
    EXPECT(ctx, gpuprobe_select(ctx, "cuda:0", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why), GPUPROBE_OK);
    assert_int_equal(dev, 1);
    EXPECT(ctx, gpuprobe_select(ctx, "cuda:2", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why),
           GPUPROBE_ERR_NOT_FOUND);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = UINT64_C(200) << 30;
    EXPECT(ctx, gpuprobe_select(ctx, "auto", &req, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why),
           GPUPROBE_ERR_NO_FIT);
    assert_contains(gpuprobe_last_error(ctx), "cuda:0 (NVIDIA A100-SXM4-40GB): ");
    assert_contains(gpuprobe_last_error(ctx), "; cpu: ");
    gpuprobe_context_destroy(ctx);

    /* The other way round: the A100 has more free memory now. */
    fleet("[gpu]\npreset = A100-40GB\n[gpu]\npreset = H200\nfree = 10GiB\n");
    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why), GPUPROBE_OK);
    assert_int_equal(dev, 1);
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.min_cc_major = 9;
    EXPECT(ctx, gpuprobe_select(ctx, "auto", &req, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why), GPUPROBE_OK);
    assert_int_equal(dev, 2);
    assert_contains(why, "the only CUDA device that meets the requirements");
    gpuprobe_context_destroy(ctx);
}

/* cuda:1 (its memory, capacity, selection, a matmul) never touches GPU 0. */
static void cuda1_touches_only_gpu1(void **state)
{
    (void)state;
    fleet(two_gpus);
    simcuda_log_clear();
    gpuprobe_context *ctx = new_ctx();
    size_t dev = 0;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 7000000000;
    EXPECT(ctx, gpuprobe_select(ctx, "cuda:1", &req, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL), GPUPROBE_OK);
    assert_int_equal(dev, 2);
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, 0), GPUPROBE_OK);
    gpuprobe_matmul_options *o = mm_options(40, 24, 56, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 2, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    assert_false(unit_state(0).context_active);
    assert_int_equal(simcuda_log_count(NULL, 0), 0); /* no call ever ran in a GPU 0 context */
    assert_true(simcuda_log_count("cublasGemmEx", 1) > 0);
    gpuprobe_context_destroy(ctx);
    assert_false(unit_state(0).context_active);
}

/* The caller's CUDA state is left exactly as it was: its current context
 * and the runtime's current device. */
static void caller_context_preserved(void **state)
{
    (void)state;
    fleet(two_gpus);
    CUresult (*init)(unsigned) = CUDA_FN(CUresult (*)(unsigned), "libcuda.so.1", "cuInit");
    CUresult (*retain)(CUcontext *, CUdevice) =
        CUDA_FN(CUresult (*)(CUcontext *, CUdevice), "libcuda.so.1", "cuDevicePrimaryCtxRetain");
    CUresult (*set_current)(CUcontext) = CUDA_FN(CUresult (*)(CUcontext), "libcuda.so.1", "cuCtxSetCurrent");
    cudaError_t (*set_device)(int) = CUDA_FN(cudaError_t (*)(int), "libcudart.so.13", "cudaSetDevice");
    cudaError_t (*get_device)(int *) = CUDA_FN(cudaError_t (*)(int *), "libcudart.so.13", "cudaGetDevice");
    CUcontext mine = NULL;
    assert_int_equal(init(0), CUDA_SUCCESS);
    assert_int_equal(retain(&mine, 0), CUDA_SUCCESS);
    assert_int_equal(set_current(mine), CUDA_SUCCESS);
    assert_int_equal(set_device(0), cudaSuccess);

    gpuprobe_context *ctx = new_ctx();
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, 0), GPUPROBE_OK);
    assert_ptr_equal(current_context(), mine);
    gpuprobe_matmul_options *o = mm_options(33, 17, 9, GPUPROBE_DTYPE_FP16);
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 2, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    assert_ptr_equal(current_context(), mine);
    int d = -1;
    assert_int_equal(get_device(&d), cudaSuccess);
    assert_int_equal(d, 0);
    gpuprobe_context_destroy(ctx);
    assert_ptr_equal(current_context(), mine);
    assert_true(unit_state(0).context_active); /* the caller's */
}

/* CUDA_VISIBLE_DEVICES="" hides both GPUs: the cause says so and auto
 * falls back to the CPU. */
static void visible_devices_empty(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    fleet(two_gpus);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0, dev = 9;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 1);
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_DEVICES_HIDDEN);
    assert_contains(detail, "hides all 2 GPU(s)");
    const char *why = NULL;
    EXPECT(ctx, gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why), GPUPROBE_OK);
    assert_int_equal(dev, 0);
    assert_contains(why, "using cpu");
    EXPECT(ctx, gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why),
           GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_contains(gpuprobe_last_error(ctx), "(devices_hidden)");
    gpuprobe_context_destroy(ctx);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* "1": the H200 alone, as cuda:0; only it is touched. */
static void visible_devices_index(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    fleet(two_gpus);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), UUID_H);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_SPEC), "cuda:0");
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_CUDA_INDEX), 0);
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.available_bytes, UINT64_C(120) << 30);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    /* NVML numbers the GPUs by bus id, whatever CUDA_VISIBLE_DEVICES says. */
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX), 1);
    assert_false(unit_state(0).context_active);
    assert_false(unit_state(1).context_active);
    gpuprobe_context_destroy(ctx);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* UUIDs (full or a unique prefix) reorder; an invalid entry ends the list. */
static void visible_devices_uuids(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        size_t n;
        const char *first, *second;
    } cases[] = {
        {"GPU-5e1e0000-4200,GPU-5e1e0000-a100-4000-8000-00000000000a", 3, UUID_H, UUID_A},
        {"1,bogus,0", 2, UUID_H, NULL},
        {"0,5,1", 2, UUID_A, NULL},
        {"GPU-5e1e0000", 1, NULL, NULL}, /* ambiguous: nothing */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("CUDA_VISIBLE_DEVICES", cases[i].value, 1);
        fleet(two_gpus);
        gpuprobe_context *ctx = new_ctx();
        size_t n = 0;
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, cases[i].n);
        if (cases[i].first)
            assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), cases[i].first);
        if (cases[i].second)
            assert_string_equal(str_attr(ctx, 2, GPUPROBE_ATTR_UUID), cases[i].second);
        if (n == 1)
            assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_DEVICES_HIDDEN);
        gpuprobe_context_destroy(ctx);
    }
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* A MIG instance named by its UUID is a device of its own memory, with
 * its own MIG- UUID. */
static void visible_devices_mig(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "MIG-7a1b0000", 1);
    fleet("[gpu]\npreset = H200\n[mig]\nname = NVIDIA H200 MIG 1g.18gb\n"
          "uuid = MIG-7a1b0000-0000-4000-8000-000000000001\ntotal = 16GiB\n"
          "[gpu]\npreset = A100-40GB\n");
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_NAME), "NVIDIA H200 MIG 1g.18gb");
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), "MIG-7a1b0000-0000-4000-8000-000000000001");
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 1);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_TOTAL_MEMORY), (int64_t)(16 * GiB));
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.total_bytes, 16 * GiB);
    assert_int_equal(m.available_bytes, 16 * GiB);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_false(unit_state(1).context_active);
    gpuprobe_context_destroy(ctx);

    /* Without NVML the entry of CUDA_VISIBLE_DEVICES tells the instance
     * (blanks around it and a prefix of the UUID, as CUDA accepts): it
     * keeps its MIG- UUID and is a MIG instance. */
    setenv("CUDA_VISIBLE_DEVICES", " MIG-7a1b0000\t ", 1);
    setenv("GPUPROBE_NVML", "off", 1);
    ctx = new_ctx();
    unsetenv("GPUPROBE_NVML");
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), "MIG-7a1b0000-0000-4000-8000-000000000001");
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 1);
    gpuprobe_context_destroy(ctx);

    /* The shortest prefix (one hex digit) and the whole UUID name it too. */
    static const char *const entries[] = {"MIG-7", "mig-7A1B0000-0000-4000-8000-000000000001"};
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        setenv("CUDA_VISIBLE_DEVICES", entries[i], 1);
        setenv("GPUPROBE_NVML", "off", 1);
        ctx = new_ctx();
        unsetenv("GPUPROBE_NVML");
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, 2);
        assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID),
                            "MIG-7a1b0000-0000-4000-8000-000000000001");
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 1);
        gpuprobe_context_destroy(ctx);
    }

    /* Entries that only look like one ("MIG" without the dash, "MIG-"
     * with no digit after it) name no instance: a whole GPU whose UUID
     * follows or contains them stays a GPU- device. */
    setenv("CUDA_VISIBLE_DEVICES", "GPU-7a1b,MIG_7a1b0000,MIG-", 1);
    fleet("[gpu]\npreset = H200\nuuid = GPU-7a1b0000-0000-4000-8000-000000000009\n");
    setenv("GPUPROBE_NVML", "off", 1);
    ctx = new_ctx();
    unsetenv("GPUPROBE_NVML");
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), "GPU-7a1b0000-0000-4000-8000-000000000009");
    int64_t v = 0;
    EXPECT(ctx, gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE, &v),
           GPUPROBE_ERR_UNSUPPORTED);
    gpuprobe_context_destroy(ctx);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* A device the driver gives no name (an empty one, or cuDeviceGetName
 * failing) is called by its ordinal; the other device keeps its own. */
static void unnamed_device(void **state)
{
    (void)state;
    static const char *const how[] = {"[gpu]\npreset = H200\nname = \n",
                                      "fail = cuDeviceGetName:1\n[gpu]\npreset = H200\n"};
    for (size_t c = 0; c < sizeof how / sizeof how[0]; c++) {
        char text[256];
        snprintf(text, sizeof text, "%s[gpu]\npreset = A100-40GB\n", how[c]);
        fleet(text);
        gpuprobe_context *ctx = new_ctx();
        size_t n = 0;
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, 3);
        assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_NAME), "CUDA device 0");
        assert_string_equal(str_attr(ctx, 2, GPUPROBE_ATTR_NAME), "NVIDIA A100-SXM4-40GB");
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MULTIPROCESSORS), 132);
        gpuprobe_context_destroy(ctx);
    }
}

/* After a GPU matmul, gpuprobe_context_destroy() releases everything the
 * library made (handles, streams, events, buffers, its own reference on
 * the primary context); the primary context itself stays, held by the
 * CUDA runtime until the process exits (as gpuprobe.h documents). */
static void destroy_leaves_runtime_context(void **state)
{
    (void)state;
    fleet(one_h200);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = mm_options(64, 48, 32, GPUPROBE_DTYPE_BF16);
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    simcuda_unit_state st = unit_state(0);
    assert_int_equal(st.context_refs, 2); /* the library's and the runtime's */
    assert_true(st.runtime_holds);
    assert_int_equal(st.blas_handles, 1);
    assert_int_equal(st.streams, 1);
    assert_int_equal(st.allocations, st.workspaces); /* only cuBLAS's workspace */
    assert_int_equal(simcuda_pinned_count(), 0);
    gpuprobe_context_destroy(ctx);
    st = unit_state(0);
    assert_true(st.context_active);
    assert_int_equal(st.context_refs, 1);
    assert_true(st.runtime_holds);
    assert_int_equal(st.blas_handles + st.streams + st.events + st.allocations, 0);
    assert_int_equal(st.free_bytes, H200_TOTAL - 500 * MiB);
    /* A later gpuprobe context finds the context there. */
    ctx = new_ctx();
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT, 0);
    assert_int_equal(m.available_bytes, H200_TOTAL - 500 * MiB);
    gpuprobe_context_destroy(ctx);
    assert_int_equal(unit_state(0).context_refs, 1);
}

/* With NVML off, memory is read inside each GPU's primary context: on a
 * twelve-GPU fleet each query creates that GPU's context once and holds
 * it (one reference, however often it is read again), and
 * gpuprobe_context_destroy() gives every one of them back. */
static void many_gpus_contexts_released(void **state)
{
    (void)state;
    enum { NGPU = 12 };
    char text[NGPU * 32] = "";
    for (int i = 0; i < NGPU; i++)
        strcat(text, "[gpu]\npreset = H200\n");
    fleet(text);
    setenv("GPUPROBE_NVML", "off", 1);
    gpuprobe_context *ctx = new_ctx();
    unsetenv("GPUPROBE_NVML");
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, NGPU + 1);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < NGPU; i++) {
            gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
            EXPECT(ctx, gpuprobe_device_memory(ctx, (size_t)i + 1, &m, 0), GPUPROBE_OK);
            assert_int_equal(m.flags, pass == 0 ? GPUPROBE_MEMORY_CREATED_CONTEXT : 0);
            assert_int_equal(m.available_bytes, H200_TOTAL - 500 * MiB);
            simcuda_unit_state st = unit_state(simcuda_unit_of_ordinal(i));
            assert_true(st.context_active);
            assert_int_equal(st.context_refs, 1);
        }
    assert_null(current_context());
    gpuprobe_context_destroy(ctx);
    for (int u = 0; u < NGPU; u++) {
        simcuda_unit_state st = unit_state(u);
        assert_false(st.context_active);
        assert_int_equal(st.free_bytes, H200_TOTAL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(one_h200_probe, setup),
        cmocka_unit_test_setup(two_gpus_selection, setup),
        cmocka_unit_test_setup(cuda1_touches_only_gpu1, setup),
        cmocka_unit_test_setup(caller_context_preserved, setup),
        cmocka_unit_test_setup(visible_devices_empty, setup),
        cmocka_unit_test_setup(visible_devices_index, setup),
        cmocka_unit_test_setup(visible_devices_uuids, setup),
        cmocka_unit_test_setup(visible_devices_mig, setup),
        cmocka_unit_test_setup(unnamed_device, setup),
        cmocka_unit_test_setup(destroy_leaves_runtime_context, setup),
        cmocka_unit_test_setup(many_gpus_contexts_released, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
