/*
 * scenario_nvml.c - probing without touching: libgpuprobe (the shared
 * library, unmodified) reads memory, health and placement through the
 * simulated NVML, and the call log and the units' counters show that no
 * CUDA context was created and no device memory allocated.
 *
 *   - an 8-GPU heterogeneous fleet, some GPUs busy, one with another
 *     program's context: memory equal to NVML's own answer, selection
 *     (auto, cuda, cuda:N, every requirement, a tie broken by utilisation),
 *     capacity and plans, all without a context; after a matmul the
 *     process's own context is counted and not held against it;
 *   - the NVML index against the CUDA ordinal, under the default
 *     CUDA_DEVICE_ORDER and PCI_BUS_ID;
 *   - a MIG-enabled H200 whose own queries are refused (as from a
 *     container holding one instance), CUDA_VISIBLE_DEVICES naming two of
 *     its MIG- instances: the instance is a device with its own UUID and
 *     memory, the GPU is never looked up by PCI bus id;
 *   - NVML failing on one call (each lookup and query), NVML failing to
 *     initialise, the context fallback and the flag that forbids it;
 *   - with "missing": no libnvidia-ml.so.1 at all (a run of its own, with a
 *     loader path that lacks it).
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

#include "scenario.h"

#include "nvml_decl.h"

/* Listed (so numbered by CUDA) out of PCI bus order. */
static const char fleet8[] =
    "[gpu]\npreset = H200\npci = 0000:c1:00.0\nfree = 100GiB\nutilization = 80\n"
    "memory_utilization = 40\ntemperature = 71\npower = 612.5\n"
    "[gpu]\npreset = H200\npci = 0000:19:00.0\nfree = 120GiB\nutilization = 30\n"
    "[gpu]\npreset = H100\npci = 0000:2a:00.0\nfree = 60GiB\nreserved = 512MiB\n"
    "[gpu]\npreset = A100-80GB\npci = 0000:3b:00.0\nfree = 70GiB\nprocess = 4242:10GiB\n"
    "[gpu]\npreset = H200\npci = 0000:5d:00.0\nfree = 120GiB\nutilization = 5\npcie = 4x8\n"
    "[gpu]\npreset = L4\npci = 0000:9a:00.0\n"
    "[gpu]\npreset = A100-40GB\npci = 0000:ab:00.0\nfree = 30GiB\n"
    "[gpu]\npreset = H200\npci = 0000:db:00.0\nfree = 140GiB\nutilization = 50\n"
    "process = 5151:30GiB\n";
/* nvidia-smi's numbering (by bus id) of CUDA ordinals 0-7 above. */
static const int fleet8_nvml_index[8] = {6, 0, 1, 2, 3, 4, 5, 7};

static const char two_gpus[] =
    "[gpu]\npreset = A100-40GB\npci = 0000:21:00.0\nfree = 30GiB\n"
    "[gpu]\npreset = H200\npci = 0000:81:00.0\nfree = 120GiB\n";

/* A MIG-enabled H200 whose own queries are refused, and its instances. */
#define MIG_A "MIG-aaaa0000-0000-4000-8000-000000000001"
#define MIG_B "MIG-bbbb0000-0000-4000-8000-000000000002"
#define H200_MIG_GPU "GPU-5e1e0000-4200-4000-8000-0000000000c1"
static const char mig_h200[] =
    "[gpu]\npreset = H200\nuuid = " H200_MIG_GPU "\npci = 0000:41:00.0\nnvml_access = denied\n"
    "[mig]\nname = NVIDIA H200 MIG 1g.18gb\nuuid = " MIG_A "\ntotal = 16GiB\n"
    "[mig]\nname = NVIDIA H200 MIG 2g.35gb\nuuid = " MIG_B "\ntotal = 32GiB\nfree = 30GiB\n"
    "[mig]\nname = NVIDIA H200 MIG 3g.71gb\nuuid = MIG-cccc0000-0000-4000-8000-000000000003\n"
    "total = 64GiB\n"
    "[gpu]\npreset = A100-40GB\npci = 0000:21:00.0\n";

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("CUDA_DEVICE_ORDER");
    unsetenv("GPUPROBE_NVML");
    return 0;
}

static int64_t int_attr(gpuprobe_context *ctx, size_t dev, gpuprobe_attr a)
{
    int64_t v = -1;
    EXPECT(ctx, gpuprobe_device_get_int(ctx, dev, a, &v), GPUPROBE_OK);
    return v;
}

static const char *str_attr(gpuprobe_context *ctx, size_t dev, gpuprobe_attr a)
{
    const char *s = NULL;
    EXPECT(ctx, gpuprobe_device_get_string(ctx, dev, a, &s), GPUPROBE_OK);
    return s;
}

/* The attribute is unknown, and the message says why. */
static void unknown_attr(gpuprobe_context *ctx, size_t dev, gpuprobe_attr a, const char *why)
{
    int64_t v = -1;
    EXPECT(ctx, gpuprobe_device_get_int(ctx, dev, a, &v), GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), why);
}

/* Nothing was done to any device: no context created, no memory
 * allocated, no call that makes either. */
static void assert_untouched(void)
{
    for (int u = 0; u < simcuda_unit_count(); u++) {
        simcuda_unit_state st = unit_state(u);
        if (st.contexts_created || st.bytes_allocated || st.context_active)
            fail_msg("unit %d: %lu context(s) created, %llu bytes allocated", u,
                     st.contexts_created, (unsigned long long)st.bytes_allocated);
    }
    static const char *const touching[] = {"cuDevicePrimaryCtxRetain", "cudaSetDevice", "cudaMalloc",
                                           "cudaMemGetInfo", "cuMemGetInfo_v2", "cublasCreate_v2"};
    for (size_t i = 0; i < sizeof touching / sizeof touching[0]; i++)
        if (simcuda_log_count(touching[i], SIMCUDA_ANY))
            fail_msg("%s was called", touching[i]);
    /* Nor an NVML call outside what the API allows (an instance index past
     * nvmlDeviceGetMaxMigDeviceCount, a MIG query on an instance). */
    simcuda_call c;
    for (size_t i = 0; simcuda_log_entry(i, &c) == 0; i++)
        if (strncmp(c.func, "nvml", 4) == 0 && c.result == NVML_ERROR_INVALID_ARGUMENT)
            fail_msg("call %lu, %s, was an invalid argument", c.seq, c.func);
}

/* NVML's own answer for the device with this UUID, asked as a program would. */
static nvmlMemory_v2_t nvml_memory_of(const char *uuid)
{
    typedef nvmlReturn_t (*init_fn)(void);
    typedef nvmlReturn_t (*by_uuid_fn)(const char *, nvmlDevice_t *);
    typedef nvmlReturn_t (*mem_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
    nvmlDevice_t d = NULL;
    nvmlMemory_v2_t m;
    memset(&m, 0, sizeof m);
    m.version = nvmlMemory_v2;
    assert_int_equal(CUDA_FN(init_fn, "libnvidia-ml.so.1", "nvmlInit_v2")(), NVML_SUCCESS);
    assert_int_equal(CUDA_FN(by_uuid_fn, "libnvidia-ml.so.1", "nvmlDeviceGetHandleByUUID")(uuid, &d),
                     NVML_SUCCESS);
    assert_int_equal(CUDA_FN(mem_fn, "libnvidia-ml.so.1", "nvmlDeviceGetMemoryInfo_v2")(d, &m),
                     NVML_SUCCESS);
    assert_int_equal(CUDA_FN(init_fn, "libnvidia-ml.so.1", "nvmlShutdown")(), NVML_SUCCESS);
    return m;
}

static size_t pick(gpuprobe_context *ctx, const char *spec, const gpuprobe_requirements *req,
                   const char **why)
{
    size_t dev = 99;
    EXPECT(ctx, gpuprobe_select(ctx, spec, req, GPUPROBE_SELECT_IGNORE_ENV, &dev, why), GPUPROBE_OK);
    return dev;
}

/* The 8-GPU fleet: every question answered through NVML, nothing touched. */
static void fleet8_untouched(void **state)
{
    (void)state;
    fleet(fleet8);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 9);
    assert_only_simulated_cuda();

    /* Memory: NVML's figures, total less the driver's reserve. */
    for (size_t i = 1; i < n; i++) {
        gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
        EXPECT(ctx, gpuprobe_device_memory(ctx, i, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
               GPUPROBE_OK);
        nvmlMemory_v2_t nv = nvml_memory_of(str_attr(ctx, i, GPUPROBE_ATTR_UUID));
        assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
        assert_int_equal(m.total_bytes, nv.total - nv.reserved);
        assert_int_equal(m.available_bytes, nv.free);
        assert_int_equal(m.used_bytes, nv.used);
        assert_int_equal(m.reserved_bytes, nv.reserved);
        assert_int_equal(m.context_held, 0);
        assert_int_equal(m.flags, 0);
        assert_int_equal(m.total_bytes, (uint64_t)int_attr(ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY));
    }
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 3, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.reserved_bytes, 512 * MiB);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 4, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.available_bytes, 60 * GiB); /* 70 GiB less the other program's 10 */

    /* Health and placement, as configured. */
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_GPU_UTILIZATION), 80);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MEMORY_UTILIZATION), 40);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_TEMPERATURE_C), 71);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_POWER_MW), 612500);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_POWER_LIMIT_MW), 700000);
    assert_int_equal(int_attr(ctx, 4, GPUPROBE_ATTR_COMPUTE_PROCESSES), 1);
    assert_int_equal(int_attr(ctx, 8, GPUPROBE_ATTR_COMPUTE_PROCESSES), 1);
    assert_int_equal(int_attr(ctx, 2, GPUPROBE_ATTR_COMPUTE_PROCESSES), 0);
    assert_int_equal(int_attr(ctx, 5, GPUPROBE_ATTR_PCIE_GEN), 4);
    assert_int_equal(int_attr(ctx, 5, GPUPROBE_ATTR_PCIE_WIDTH), 8);
    assert_int_equal(int_attr(ctx, 5, GPUPROBE_ATTR_PCIE_MAX_GEN), 5);
    assert_int_equal(int_attr(ctx, 5, GPUPROBE_ATTR_PCIE_MAX_WIDTH), 16);
    assert_int_equal(int_attr(ctx, 6, GPUPROBE_ATTR_POWER_LIMIT_MW), 72000);
    unknown_attr(ctx, 6, GPUPROBE_ATTR_MIG_MODE, "NVML did not say"); /* an L4: no MIG */
    assert_int_equal(int_attr(ctx, 7, GPUPROBE_ATTR_MIG_MODE), 0);
    assert_int_equal(int_attr(ctx, 7, GPUPROBE_ATTR_MIG_COUNT), 0);
    assert_int_equal(int_attr(ctx, 7, GPUPROBE_ATTR_MIG_INSTANCE), 0);
    unknown_attr(ctx, 7, GPUPROBE_ATTR_MIG_INDEX, "a whole GPU, not a MIG instance");
    for (size_t i = 1; i < n; i++)
        assert_int_equal(int_attr(ctx, i, GPUPROBE_ATTR_NVML_INDEX), fleet8_nvml_index[i - 1]);

    /* auto: cuda:1 and cuda:4 have as much free memory; cuda:4 is less busy. */
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, &why), 5);
    assert_contains(why, "cuda:4 (NVIDIA H200) has the most free memory (128.8 GB) of 8 CUDA devices");
    assert_contains(why, "as much free as cuda:1 (NVIDIA H200), less busy (5%, not 30%)");
    assert_int_equal(pick(ctx, "cuda", NULL, NULL), 5);
    assert_int_equal(pick(ctx, "cuda:7", NULL, NULL), 8);

    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.max_utilization = 20;
    req.no_other_process = 1;
    assert_int_equal(pick(ctx, "cuda", &req, &why), 5);
    assert_contains(why, "cuda:0 (NVIDIA H200): 80% busy > 20% allowed");
    assert_contains(why, "cuda:3 (NVIDIA A100-SXM4-80GB): 1 other process with a CUDA context");
    req.max_utilization = 0;
    assert_int_equal(pick(ctx, "cuda", &req, &why), 3); /* the idle H100 */
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 60000000000; /* 120 GB in fp16: only the two H200s with 120 GiB */
    simcuda_log_clear();
    assert_int_equal(pick(ctx, "cuda", &req, &why), 5);
    /* One memory reading per GPU serves the ranking and the fit. */
    assert_int_equal(simcuda_log_count("nvmlDeviceGetMemoryInfo_v2", SIMCUDA_ANY), n - 1);
    req.fit_params = 65000000000;
    size_t dev = 0;
    EXPECT(ctx, gpuprobe_select(ctx, "cuda", &req, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why),
           GPUPROBE_ERR_NO_FIT);
    assert_contains(gpuprobe_last_error(ctx), "after a 536.9 MB default CUDA context reserve");
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.max_utilization = 101;
    EXPECT(ctx, gpuprobe_select(ctx, "cuda", &req, GPUPROBE_SELECT_IGNORE_ENV, &dev, &why),
           GPUPROBE_ERR_INVALID_ARGUMENT);

    /* Capacity and plans read the same figures. */
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    EXPECT(ctx, gpuprobe_device_capacity(ctx, 2, GPUPROBE_DTYPE_BF16, GPUPROBE_WORKLOAD_INFERENCE, 0, &cap),
           GPUPROBE_OK);
    assert_int_equal(cap.free_bytes, 120 * GiB);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_DEFAULT);
    gpuprobe_model *model = NULL;
    assert_int_equal(gpuprobe_model_create(&model), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(model, GPUPROBE_MODEL_PARAMS, INT64_C(150000000000)), GPUPROBE_OK);
    size_t count = 0, devs[8];
    EXPECT(ctx, gpuprobe_plan_gpus(ctx, model, NULL, 0, &count, devs, 8), GPUPROBE_OK);
    /* 360 GB (1.2 x 300) over t GPUs, plus 1.5 GiB each: the three with
     * the most free (128.8, 128.8, 118.1 GB) are short, four suffice:
     * cuda:0, cuda:1, cuda:4 and cuda:7, in index order. */
    assert_int_equal(count, 4);
    assert_int_equal(devs[0], 1);
    assert_int_equal(devs[1], 2);
    assert_int_equal(devs[2], 5);
    assert_int_equal(devs[3], 8);
    gpuprobe_model_destroy(model);

    assert_untouched();
    gpuprobe_context_destroy(ctx);
    assert_int_equal(simcuda_nvml_refs(), 0);
}

/* Work makes a context (only there); the process's own context is then
 * held, listed by NVML, and not counted against it. */
static void own_context_after_work(void **state)
{
    (void)state;
    fleet(fleet8);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = mm_options(32, 16, 8, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 3, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    assert_int_equal(unit_state(2).contexts_created, 1);
    for (int u = 0; u < 8; u++)
        if (u != 2)
            assert_int_equal(unit_state(u).contexts_created, 0);
    assert_int_equal(int_attr(ctx, 3, GPUPROBE_ATTR_COMPUTE_PROCESSES), 1); /* this one */
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 3, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(m.context_held, 1);
    assert_int_equal(m.available_bytes, 60 * GiB - 500 * MiB - unit_state(2).allocated_bytes);
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    EXPECT(ctx, gpuprobe_device_capacity(ctx, 3, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
           GPUPROBE_OK);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_CONTEXT_HELD);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.no_other_process = 1;
    req.max_utilization = 0;
    assert_int_equal(pick(ctx, "cuda", &req, NULL), 3); /* its own context does not count */
    gpuprobe_context_destroy(ctx);
}

/* nvidia-smi's numbering against CUDA's, in both CUDA orders. */
static void nvml_index_and_order(void **state)
{
    (void)state;
    for (int pci_order = 0; pci_order < 2; pci_order++) {
        if (pci_order)
            setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
        fleet(fleet8);
        gpuprobe_context *ctx = new_ctx();
        for (size_t i = 1; i <= 8; i++) {
            int64_t nv = int_attr(ctx, i, GPUPROBE_ATTR_NVML_INDEX);
            if (pci_order)
                assert_int_equal(nv, (int64_t)(i - 1)); /* the same numbering */
            else
                assert_int_equal(nv, fleet8_nvml_index[i - 1]);
        }
        /* The GPU at 0000:c1 is cuda:0 by default, cuda:6 by bus id. */
        assert_string_equal(str_attr(ctx, pci_order ? 7 : 1, GPUPROBE_ATTR_PCI_BUS_ID), "0000:C1:00.0");
        gpuprobe_context_destroy(ctx);
        unsetenv("CUDA_DEVICE_ORDER");
    }
}

/* The MIG-enabled H200: CUDA_VISIBLE_DEVICES names two of its instances
 * (CUDA enumerates the first); each is a device of its own memory and UUID,
 * found by its own UUID (the GPU refuses every query of its own, and is
 * never looked up by PCI bus id). */
static void mig_instances(void **state)
{
    (void)state;
    static const struct {
        const char *visible, *uuid, *name;
        uint64_t total, free_bytes;
        int64_t index;
    } cases[] = {
        {MIG_B "," MIG_A, MIG_B, "NVIDIA H200 MIG 2g.35gb", 32 * GiB, 30 * GiB, 1},
        {"MIG-aaaa,MIG-bbbb", MIG_A, "NVIDIA H200 MIG 1g.18gb", 16 * GiB, 16 * GiB, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        setenv("CUDA_VISIBLE_DEVICES", cases[c].visible, 1);
        fleet(mig_h200);
        gpuprobe_context *ctx = new_ctx();
        size_t n = 0;
        EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, 2);
        assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), cases[c].uuid);
        assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_NAME), cases[c].name);
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 1);
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_MODE), 1);
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INDEX), cases[c].index);
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_COUNT), 3);
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX), 1); /* 0000:41, after 0000:21 */
        assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_MIG_PARENT_UUID), H200_MIG_GPU);
        gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
        EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT), GPUPROBE_OK);
        assert_int_equal(m.total_bytes, cases[c].total);
        assert_int_equal(m.available_bytes, cases[c].free_bytes);
        assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
        assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_COMPUTE_PROCESSES), 0);
        /* Utilisation: not in MIG mode; the GPU's figures: refused here. */
        unknown_attr(ctx, 1, GPUPROBE_ATTR_GPU_UTILIZATION, "Not Supported (NVML error 3)");
        unknown_attr(ctx, 1, GPUPROBE_ATTR_TEMPERATURE_C,
                     "nvmlDeviceGetTemperature failed: Insufficient Permissions (NVML error 4)");
        /* The PCIe link and the power are the GPU's too: asked of it. */
        static const struct {
            gpuprobe_attr attr;
            const char *call;
        } of_gpu[] = {
            {GPUPROBE_ATTR_POWER_MW, "nvmlDeviceGetPowerUsage"},
            {GPUPROBE_ATTR_POWER_LIMIT_MW, "nvmlDeviceGetEnforcedPowerLimit"},
            {GPUPROBE_ATTR_PCIE_GEN, "nvmlDeviceGetCurrPcieLinkGeneration"},
            {GPUPROBE_ATTR_PCIE_WIDTH, "nvmlDeviceGetCurrPcieLinkWidth"},
            {GPUPROBE_ATTR_PCIE_MAX_GEN, "nvmlDeviceGetMaxPcieLinkGeneration"},
            {GPUPROBE_ATTR_PCIE_MAX_WIDTH, "nvmlDeviceGetMaxPcieLinkWidth"},
        };
        for (size_t a = 0; a < sizeof of_gpu / sizeof of_gpu[0]; a++) {
            char want[160];
            snprintf(want, sizeof want,
                     "%s failed: Insufficient Permissions (NVML error 4)", of_gpu[a].call);
            unknown_attr(ctx, 1, of_gpu[a].attr, want);
        }
        const char *why = NULL;
        assert_int_equal(pick(ctx, "auto", NULL, &why), 1);
        assert_int_equal(simcuda_log_count("nvmlDeviceGetHandleByPciBusId_v2", SIMCUDA_ANY), 0);
        assert_untouched();
        gpuprobe_context_destroy(ctx);
    }
    /* NVML cannot look the instance up by its UUID: at its PCI bus id is
     * its GPU, in MIG mode, which is not the device; NVML then knows
     * nothing of the instance, and says why. */
    setenv("CUDA_VISIBLE_DEVICES", MIG_B, 1);
    fleet(mig_h200);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetHandleByUUID:1+"), 0);
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), MIG_B);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 1);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetHandleByPciBusId_v2", SIMCUDA_ANY), 1);
    unknown_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX,
                 "the GPU at its PCI bus id is in MIG mode (the device is one of its instances)");
    unknown_attr(ctx, 1, GPUPROBE_ATTR_MIG_COUNT, "in MIG mode");
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    gpuprobe_context_destroy(ctx);
    simcuda_clear_faults();

    /* NVML cannot give the instance's GPU: the instance is still found by
     * its own UUID and says what it knows of itself; its GPU's facts are
     * unknown, never made up (nor left from the device found before it,
     * the A100 listed first). */
    setenv("CUDA_VISIBLE_DEVICES", "1," MIG_B, 1);
    fleet(mig_h200);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetDeviceHandleFromMigDeviceHandle:1+"), 0);
    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 3);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 0);
    assert_string_equal(str_attr(ctx, 2, GPUPROBE_ATTR_UUID), MIG_B);
    assert_int_equal(int_attr(ctx, 2, GPUPROBE_ATTR_MIG_INSTANCE), 1);
    assert_int_equal(int_attr(ctx, 2, GPUPROBE_ATTR_MIG_INDEX), 1);
    const char *s = NULL;
    EXPECT(ctx, gpuprobe_device_get_string(ctx, 2, GPUPROBE_ATTR_MIG_PARENT_UUID, &s),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "NVML did not say");
    unknown_attr(ctx, 2, GPUPROBE_ATTR_MIG_COUNT, "NVML did not say");
    unknown_attr(ctx, 2, GPUPROBE_ATTR_NVML_INDEX, "NVML did not say");
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT), GPUPROBE_OK);
    assert_int_equal(m.total_bytes, 32 * GiB);
    gpuprobe_context_destroy(ctx);
    simcuda_clear_faults();
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* NVML failing on one call: each lookup and query in turn. */
static void nvml_fails_once(void **state)
{
    (void)state;
    /* The UUID lookup: the GPU is found by its PCI bus id instead. */
    fleet(two_gpus);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetHandleByUUID:1"), 0);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(m.available_bytes, 30 * GiB);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetHandleByPciBusId_v2", SIMCUDA_ANY), 1);
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* Both lookups failing: NVML knows nothing of that GPU, not even
     * whether it is a MIG instance, and says why; the other GPU is found. */
    fleet(two_gpus);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetHandleByUUID:1"), 0);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetHandleByPciBusId_v2:1"), 0);
    ctx = new_ctx();
    unknown_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE,
                 "nvmlDeviceGetHandleByUUID failed: Unknown Error (NVML error 999); "
                 "nvmlDeviceGetHandleByPciBusId_v2 failed: Unknown Error (NVML error 999)");
    unknown_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX, "nvmlDeviceGetHandleByPciBusId_v2 failed");
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(int_attr(ctx, 2, GPUPROBE_ATTR_MIG_INSTANCE), 0);
    assert_int_equal(int_attr(ctx, 2, GPUPROBE_ATTR_NVML_INDEX), 1);
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* A device the driver gives no UUID is not looked up by one: by its
     * PCI bus id at once. */
    fleet(two_gpus);
    assert_int_equal(simcuda_set("fail = cuDeviceGetUuid_v2:1"), 0);
    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(m.available_bytes, 30 * GiB);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX), 0);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetHandleByUUID", SIMCUDA_ANY), 1); /* cuda:1's */
    assert_int_equal(simcuda_log_count("nvmlDeviceGetHandleByPciBusId_v2", SIMCUDA_ANY), 1);
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* The version 2 memory query: version 1 answers (no reserve known). */
    fleet(two_gpus);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo_v2:1"), 0);
    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(m.available_bytes, 30 * GiB);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetMemoryInfo", SIMCUDA_ANY), 1);
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* Both memory queries: refused without a context; else the context
     * fallback for that device, its cost measured by NVML's next answers;
     * the other device unaffected. */
    fleet(two_gpus);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo_v2:1"), 0);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo:1"), 0);
    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "nvmlDeviceGetMemoryInfo failed: Unknown Error (NVML error 999)");
    assert_false(unit_state(0).context_active);
    /* The refusal says which query failed, for which GPU, and how. */
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo_v2:1"), 0);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo:1=NVML_ERROR_NO_PERMISSION"), 0);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "the free memory of cuda:1 (NVIDIA H200) cannot be read without a "
                        "CUDA context (GPUPROBE_DEVICE_MEMORY_NO_CONTEXT): NVML's memory "
                        "query for cuda:1: nvmlDeviceGetMemoryInfo failed: Insufficient "
                        "Permissions (NVML error 4)");
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo_v2:1"), 0); /* from now on */
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetMemoryInfo:1"), 0);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT);
    assert_int_equal(m.flags, GPUPROBE_MEMORY_CREATED_CONTEXT | GPUPROBE_MEMORY_CONTEXT_MEASURED);
    assert_int_equal(m.context_bytes, 500 * MiB);
    assert_int_equal(m.available_bytes, 30 * GiB - 500 * MiB);
    assert_int_equal(unit_state(0).contexts_created, 1);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(unit_state(1).contexts_created, 0);
    gpuprobe_context_destroy(ctx);
    assert_false(unit_state(0).context_active);

    /* A health query: unknown with the NVML error, then known again. */
    fleet(two_gpus);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetUtilizationRates:1"), 0);
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetComputeRunningProcesses_v3:1=NVML_ERROR_NO_PERMISSION"), 0);
    ctx = new_ctx();
    unknown_attr(ctx, 1, GPUPROBE_ATTR_GPU_UTILIZATION,
                 "nvmlDeviceGetUtilizationRates failed: Unknown Error (NVML error 999)");
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_GPU_UTILIZATION), 0);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.no_other_process = 1;
    const char *why = NULL;
    assert_int_equal(pick(ctx, "cuda", &req, &why), 2); /* cuda:0's processes unknown */
    assert_contains(why, "cuda:0 (NVIDIA A100-SXM4-40GB): processes unknown");
    assert_contains(why, "Insufficient Permissions");
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* The process count is asked of the newest entry point (the one nvml.h
     * maps the name to), not of the older ones the library also exports. */
    assert_true(simcuda_log_count("nvmlDeviceGetComputeRunningProcesses_v3", SIMCUDA_ANY) >= 2);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetComputeRunningProcesses_v2", SIMCUDA_ANY), 0);
    assert_int_equal(simcuda_log_count("nvmlDeviceGetComputeRunningProcesses", SIMCUDA_ANY), 0);

    /* Each of the GPU's own figures failing: unknown, with the call named. */
    static const struct {
        gpuprobe_attr attr;
        const char *call;
    } figures[] = {
        {GPUPROBE_ATTR_MEMORY_UTILIZATION, "nvmlDeviceGetUtilizationRates"},
        {GPUPROBE_ATTR_TEMPERATURE_C, "nvmlDeviceGetTemperature"},
        {GPUPROBE_ATTR_POWER_MW, "nvmlDeviceGetPowerUsage"},
        {GPUPROBE_ATTR_POWER_LIMIT_MW, "nvmlDeviceGetEnforcedPowerLimit"},
        {GPUPROBE_ATTR_PCIE_GEN, "nvmlDeviceGetCurrPcieLinkGeneration"},
        {GPUPROBE_ATTR_PCIE_WIDTH, "nvmlDeviceGetCurrPcieLinkWidth"},
        {GPUPROBE_ATTR_PCIE_MAX_GEN, "nvmlDeviceGetMaxPcieLinkGeneration"},
        {GPUPROBE_ATTR_PCIE_MAX_WIDTH, "nvmlDeviceGetMaxPcieLinkWidth"},
    };
    for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++) {
        char rule[96], want[128];
        fleet(two_gpus);
        snprintf(rule, sizeof rule, "fail = %s:1", figures[f].call);
        assert_int_equal(simcuda_set(rule), 0);
        ctx = new_ctx();
        snprintf(want, sizeof want, "%s failed: Unknown Error (NVML error 999)", figures[f].call);
        unknown_attr(ctx, 2, figures[f].attr, want);
        assert_true(int_attr(ctx, 2, figures[f].attr) >= 0);
        gpuprobe_context_destroy(ctx);
    }

    /* nvmlInit failing: NVML unusable, said once in the CUDA detail. */
    fleet("nvml_init_error = NVML_ERROR_DRIVER_NOT_LOADED\n[gpu]\npreset = H200\n");
    ctx = new_ctx();
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_AVAILABLE);
    assert_contains(detail, "NVML is not usable (nvmlInit_v2 failed: Driver Not Loaded (NVML error 9))");
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT);
    unknown_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX, "nvmlInit_v2 failed");
    gpuprobe_context_destroy(ctx);
}

/* A tie on free memory among three GPUs: each is compared with the best
 * so far, by that GPU's utilisation (not the first one's). A GPU whose
 * process count is unknown is left out for that, under a utilisation limit
 * it meets. */
static void tie_of_three(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\nfree = 120GiB\nutilization = 50\n"
          "[gpu]\npreset = H200\nfree = 120GiB\nutilization = 20\n"
          "[gpu]\npreset = H200\nfree = 120GiB\nutilization = 30\n");
    gpuprobe_context *ctx = new_ctx();
    const char *why = NULL;
    /* cuda:1 (20%) beats cuda:0 (50%); cuda:2 (30%) is busier than cuda:1 */
    assert_int_equal(pick(ctx, "auto", NULL, &why), 2);
    assert_string_equal(why, "auto: cuda:1 (NVIDIA H200) has the most free memory (128.8 GB) "
                             "of 3 CUDA devices; as much free as cuda:0 (NVIDIA H200), less "
                             "busy (20%, not 50%)");
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* Utilisation within the limit, processes unknown: that is the reason. */
    fleet("[gpu]\npreset = A100-40GB\nfree = 30GiB\nutilization = 30\n"
          "[gpu]\npreset = H200\nfree = 120GiB\nutilization = 10\n");
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetComputeRunningProcesses_v3:1="
                                 "NVML_ERROR_NO_PERMISSION"), 0);
    ctx = new_ctx();
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.max_utilization = 100;
    req.no_other_process = 1;
    assert_int_equal(pick(ctx, "cuda", &req, &why), 2);
    assert_contains(why, "; skipped cuda:0 (NVIDIA A100-SXM4-40GB): processes unknown (");
    assert_contains(why, "Insufficient Permissions");
    assert_true(strstr(why, "other process") == NULL);
    assert_untouched();
    gpuprobe_context_destroy(ctx);
}

/* A MIG instance has no utilisation in NVML: a utilisation limit skips it
 * with a reason in words for people, never the library's or NVML's names. */
static void mig_utilization_skip_reason(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\npci = 0000:41:00.0\n"
          "[mig]\nname = NVIDIA H200 MIG 3g.71gb\ntotal = 64GiB\n"
          "[gpu]\npreset = A100-40GB\npci = 0000:21:00.0\nutilization = 10\n");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.max_utilization = 50;
    const char *why = NULL;
    size_t dev = pick(ctx, "cuda", &req, &why);
    assert_contains(why, "(NVIDIA A100-SXM4-40GB)");
    assert_contains(why, "; skipped cuda:");
    assert_contains(why, "(NVIDIA H200 MIG 3g.71gb): utilisation unknown (NVML does not report it "
                         "for a MIG instance)");
    assert_null(strstr(why, "GPUPROBE_"));
    assert_null(strstr(why, "nvml"));
    assert_null(strstr(why, "NVML error"));
    assert_true(dev >= 1);
    gpuprobe_context_destroy(ctx);
}

/* A tie on free memory broken by utilisation: the first GPU's figure is
 * given as it is, 100% (fully busy) included, and as "unknown" when NVML
 * could not say; an idle GPU's 0% is a figure, not "unknown". */
static void tie_against_full_or_unknown(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\nfree = 120GiB\nutilization = 100\n"
          "[gpu]\npreset = H200\nfree = 120GiB\nutilization = 5\n");
    gpuprobe_context *ctx = new_ctx();
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, &why), 2);
    assert_contains(why, "; as much free as cuda:0 (NVIDIA H200), less busy (5%, not 100%)");
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* cuda:0's utilisation query fails (the first one made), cuda:1's
     * answers */
    fleet("[gpu]\npreset = H200\nfree = 120GiB\nutilization = 40\n"
          "[gpu]\npreset = H200\nfree = 120GiB\nutilization = 5\n");
    assert_int_equal(simcuda_set("fail = nvmlDeviceGetUtilizationRates:1"), 0);
    ctx = new_ctx();
    assert_int_equal(pick(ctx, "auto", NULL, &why), 2);
    assert_contains(why, "; as much free as cuda:0 (NVIDIA H200), less busy (5%, not unknown)");
    assert_untouched();
    gpuprobe_context_destroy(ctx);

    /* an idle GPU (0%) is known, and less busy than one at 5% */
    fleet("[gpu]\npreset = H200\nfree = 120GiB\nutilization = 5\n"
          "[gpu]\npreset = H200\nfree = 120GiB\nutilization = 0\n");
    ctx = new_ctx();
    assert_int_equal(pick(ctx, "auto", NULL, &why), 2);
    assert_contains(why, "; as much free as cuda:0 (NVIDIA H200), less busy (0%, not 5%)");
    assert_untouched();
    gpuprobe_context_destroy(ctx);
}

/* No libnvidia-ml.so.1: the stated fallback everywhere; a MIG instance is
 * still told by CUDA_VISIBLE_DEVICES. */
static void nvml_missing(void **state)
{
    (void)state;
    fleet(two_gpus);
    gpuprobe_context *ctx = new_ctx();
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_AVAILABLE);
    assert_contains(detail, "; NVML is not usable (libnvidia-ml.so.1 cannot be loaded");
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
           GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "cannot be read without a CUDA context");
    assert_false(unit_state(1).context_active);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, &why), 2);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 2, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT);
    assert_int_equal(m.available_bytes, 120 * GiB - 500 * MiB);
    assert_int_equal(m.context_held, 1);
    assert_int_equal(unit_state(0).contexts_created, 1); /* selection looked at both */
    assert_int_equal(unit_state(1).contexts_created, 1);
    unknown_attr(ctx, 1, GPUPROBE_ATTR_GPU_UTILIZATION, "NVML is not usable");
    unknown_attr(ctx, 1, GPUPROBE_ATTR_NVML_INDEX, "libnvidia-ml.so.1 cannot be loaded");
    gpuprobe_context_destroy(ctx);

    setenv("CUDA_VISIBLE_DEVICES", "MIG-bbbb", 1);
    fleet(mig_h200);
    ctx = new_ctx();
    assert_string_equal(str_attr(ctx, 1, GPUPROBE_ATTR_UUID), MIG_B);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE), 1);
    assert_int_equal(int_attr(ctx, 1, GPUPROBE_ATTR_MIG_MODE), 1);
    EXPECT(ctx, gpuprobe_device_memory(ctx, 1, &m, 0), GPUPROBE_OK);
    assert_int_equal(m.available_bytes, 30 * GiB - 500 * MiB); /* the instance's own */
    gpuprobe_context_destroy(ctx);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* With NVML turned off, a plan over the GPUs reads their free memory
 * through CUDA contexts, as the memory query does without flags. */
static void plan_without_nvml(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = A100-40GB\n[gpu]\npreset = H200\n");
    setenv("GPUPROBE_NVML", "off", 1);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    unsetenv("GPUPROBE_NVML");
    gpuprobe_model *model = NULL;
    assert_int_equal(gpuprobe_model_create(&model), GPUPROBE_OK);
    /* 48 GB (1.2 x 40 GB in bf16): only the H200 */
    assert_int_equal(gpuprobe_model_set(model, GPUPROBE_MODEL_PARAMS, INT64_C(20000000000)), GPUPROBE_OK);
    size_t count = 0, devs[4] = {0};
    EXPECT(ctx, gpuprobe_plan_gpus(ctx, model, NULL, 0, &count, devs, 4), GPUPROBE_OK);
    assert_int_equal(count, 1);
    assert_int_equal(devs[0], 2);
    gpuprobe_model_destroy(model);
    gpuprobe_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "missing") == 0) {
        void *nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (nvml) {
            printf("SKIP: the loader finds a libnvidia-ml.so.1 here: \"no NVML\" cannot be simulated\n");
            return 77;
        }
        const struct CMUnitTest tests[] = {cmocka_unit_test_setup(nvml_missing, setup)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(fleet8_untouched, setup),
        cmocka_unit_test_setup(own_context_after_work, setup),
        cmocka_unit_test_setup(plan_without_nvml, setup),
        cmocka_unit_test_setup(nvml_index_and_order, setup),
        cmocka_unit_test_setup(mig_instances, setup),
        cmocka_unit_test_setup(nvml_fails_once, setup),
        cmocka_unit_test_setup(tie_of_three, setup),
        cmocka_unit_test_setup(mig_utilization_skip_reason, setup),
        cmocka_unit_test_setup(tie_against_full_or_unknown, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
