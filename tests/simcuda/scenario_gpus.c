/*
 * scenario_gpus.c - the GPUs NVML knows (gpuprobe_gpus_*, ABI 1.2): the
 * shared library, unmodified, against the simulated NVML.
 *
 *   - a node of four GPUs of two products, listed out of PCI bus order,
 *     one in MIG mode with three MIG devices, CUDA_VISIBLE_DEVICES naming
 *     a GPU, one MIG device and another GPU: the three numberings (NVML
 *     index, CUDA ordinal, MIG index), the facts of every GPU whether CUDA
 *     sees it or not, the MIG devices (profile, ids, slices, memory,
 *     cuda:N or none), the processes of both of NVML's lists (one in both,
 *     one whose memory NVML cannot give, one on the MIG device CUDA does
 *     not see), the driver's version; no context created, nothing
 *     allocated;
 *   - a GPU in MIG mode that refuses its own queries (a container holding
 *     one MIG device): its fields unknown and why, its MIG devices and
 *     their processes listed;
 *   - NVML failing: to count (the call fails), on one GPU's handle (that
 *     GPU listed, every field unknown and why), on a process list (no
 *     process listed, the count unknown); NVML turned off; the arguments
 *     and the size-prefixed structs.
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

#define GPU_A "GPU-5e1e0000-4200-4000-8000-0000000000a0"
#define GPU_B "GPU-5e1e0000-4200-4000-8000-0000000000b0"
#define GPU_C "GPU-5e1e0000-4100-4000-8000-0000000000c0"
#define GPU_D "GPU-5e1e0000-4200-4000-8000-0000000000d0"
#define MIG_0 "MIG-d0d00000-0000-4000-8000-000000000000"
#define MIG_1 "MIG-d0d00000-0000-4000-8000-000000000001"
#define MIG_2 "MIG-d0d00000-0000-4000-8000-000000000002"
/* The PID of a process in another PID namespace: above any pid_max, so no
 * process here has it. */
#define OTHER_PID 4194304u

/* CUDA numbers in this order; NVML by bus id: 19 (A), 2a (C), 3b (B), 5d (D). */
static const char node4[] =
    "driver_string = 580.65.06\n"
    "[gpu]\npreset = H200\nuuid = " GPU_A "\npci = 0000:19:00.0\nutilization = 35\n"
    "temperature = 41\npower = 287.5\nprocess = 4242:20GiB\nprocess = 1777:512MiB:graphics\n"
    "[gpu]\npreset = H200\nuuid = " GPU_B "\npci = 0000:3b:00.0\n"
    "process = 5151:40GiB:both\nprocess = 4194304:12GiB\n"
    "[gpu]\npreset = H100\nuuid = " GPU_C "\npci = 0000:2a:00.0\nprocess = 6262:n/a\n"
    "[gpu]\npreset = H200\nuuid = " GPU_D "\npci = 0000:5d:00.0\n"
    "[mig]\nprofile = 3g.71gb\ngi = 2\nuuid = " MIG_0 "\ntotal = 66GiB\nprocess = 7373:8GiB\n"
    "[mig]\nprofile = 1g.18gb\ngi = 9\nuuid = " MIG_1 "\ntotal = 16GiB\nprocess = 8484:3GiB\n"
    "[mig]\nprofile = 1g.18gb\ngi = 10\nci = 1\nuuid = " MIG_2 "\ntotal = 16GiB\n";

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("CUDA_DEVICE_ORDER");
    unsetenv("GPUPROBE_NVML");
    unsetenv("GPUPROBE_CUDA");
    return 0;
}

static gpuprobe_gpus *read_gpus(gpuprobe_context *ctx)
{
    gpuprobe_gpus *g = NULL;
    EXPECT(ctx, gpuprobe_gpus_read(ctx, 0, &g), GPUPROBE_OK);
    assert_non_null(g);
    return g;
}

static int64_t gint(const gpuprobe_gpus *g, size_t gpu, gpuprobe_gpu_field f)
{
    int64_t v = -99;
    gpuprobe_status st = gpuprobe_gpus_get_int(g, gpu, f, &v);
    if (st != GPUPROBE_OK)
        fail_msg("GPU %zu field %d: %s (%s)", gpu, (int)f, gpuprobe_status_name(st),
                 gpuprobe_gpus_why(g, gpu, f));
    assert_string_equal(gpuprobe_gpus_why(g, gpu, f), "");
    return v;
}

static const char *gstr(const gpuprobe_gpus *g, size_t gpu, gpuprobe_gpu_field f)
{
    const char *s = NULL;
    gpuprobe_status st = gpuprobe_gpus_get_string(g, gpu, f, &s);
    if (st != GPUPROBE_OK)
        fail_msg("GPU %zu field %d: %s (%s)", gpu, (int)f, gpuprobe_status_name(st),
                 gpuprobe_gpus_why(g, gpu, f));
    return s;
}

/* The field is unknown, and why names the NVML call. */
static void unknown(const gpuprobe_gpus *g, size_t gpu, gpuprobe_gpu_field f, const char *why)
{
    int64_t v = -99;
    assert_int_equal(gpuprobe_gpus_get_int(g, gpu, f, &v), GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(v, -99);
    assert_contains(gpuprobe_gpus_why(g, gpu, f), why);
}

static gpuprobe_mig_device mig(const gpuprobe_gpus *g, size_t gpu, size_t i)
{
    gpuprobe_mig_device m = GPUPROBE_MIG_DEVICE_INIT;
    assert_int_equal(gpuprobe_gpus_mig_device(g, gpu, i, &m), GPUPROBE_OK);
    return m;
}

static gpuprobe_process proc(const gpuprobe_gpus *g, size_t gpu, size_t i)
{
    gpuprobe_process p = GPUPROBE_PROCESS_INIT;
    assert_int_equal(gpuprobe_gpus_process(g, gpu, i, &p), GPUPROBE_OK);
    return p;
}

static void untouched(void)
{
    for (int u = 0; u < simcuda_unit_count(); u++) {
        simcuda_unit_state st = unit_state(u);
        if (st.contexts_created || st.bytes_allocated || st.context_active)
            fail_msg("unit %d: %lu context(s) created, %llu bytes allocated", u,
                     st.contexts_created, (unsigned long long)st.bytes_allocated);
    }
    assert_int_equal(simcuda_log_count("cuDevicePrimaryCtxRetain", SIMCUDA_ANY), 0);
    assert_int_equal(simcuda_log_count("cudaSetDevice", SIMCUDA_ANY), 0);
}

/* The node, its three numberings, every GPU whether CUDA sees it or not. */
static void node_of_four(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", GPU_B "," MIG_0 "," GPU_A, 1);
    fleet(node4);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_gpus *g = read_gpus(ctx);
    assert_only_simulated_cuda();
    assert_int_equal(gpuprobe_gpus_count(g), 4);
    static const char *const uuid[4] = {GPU_A, GPU_C, GPU_B, GPU_D};
    static const char *const bus[4] = {"0000:19:00.0", "0000:2A:00.0", "0000:3B:00.0",
                                       "0000:5D:00.0"};
    static const int cuda[4] = {2, -1, 0, -1}; /* C hidden; D in MIG mode */
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(gint(g, i, GPUPROBE_GPU_INDEX), (int64_t)i);
        assert_string_equal(gstr(g, i, GPUPROBE_GPU_UUID), uuid[i]);
        assert_string_equal(gstr(g, i, GPUPROBE_GPU_PCI_BUS_ID), bus[i]);
        assert_string_equal(gstr(g, i, GPUPROBE_GPU_DRIVER_VERSION), "580.65.06");
        assert_int_equal(gint(g, i, GPUPROBE_GPU_CUDA_INDEX), cuda[i]);
        assert_int_equal(gint(g, i, GPUPROBE_GPU_PCIE_MAX_GEN), 5);
    }
    assert_string_equal(gstr(g, 1, GPUPROBE_GPU_NAME), "NVIDIA H100 80GB HBM3");
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_TOTAL_BYTES), 150754820096);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_USED_BYTES), (int64_t)(20 * GiB + 512 * MiB));
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_FREE_BYTES),
                     (int64_t)(150754820096 - 20 * GiB - 512 * MiB));
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_RESERVED_BYTES), 0);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_GPU_UTILIZATION), 35);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_TEMPERATURE_C), 41);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_POWER_MW), 287500);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_POWER_LIMIT_MW), 700000);
    assert_int_equal(gint(g, 1, GPUPROBE_GPU_CC_MAJOR), 9);
    assert_int_equal(gint(g, 1, GPUPROBE_GPU_CC_MINOR), 0);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_MIG_MODE), 0);
    assert_int_equal(gint(g, 3, GPUPROBE_GPU_MIG_MODE), 1);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_MIG_DEVICES), 0);
    unknown(g, 3, GPUPROBE_GPU_GPU_UTILIZATION, "nvmlDeviceGetUtilizationRates failed: Not Supported");

    /* The MIG devices: the first is cuda:1, the others CUDA does not see. */
    assert_int_equal(gint(g, 3, GPUPROBE_GPU_MIG_DEVICES), 3);
    gpuprobe_mig_device m = mig(g, 3, 0);
    assert_int_equal(m.mig_index, 0);
    assert_string_equal(m.uuid, MIG_0);
    assert_string_equal(m.name, "NVIDIA H200 MIG 3g.71gb");
    assert_string_equal(m.profile, "3g.71gb");
    assert_int_equal(m.slices, 3);
    assert_int_equal(m.gpu_instance_id, 2);
    assert_int_equal(m.compute_instance_id, 0);
    assert_int_equal(m.cuda_index, 1);
    assert_int_equal(m.total_bytes, 66 * GiB);
    assert_int_equal(m.used_bytes, 8 * GiB);
    assert_int_equal(m.free_bytes, 58 * GiB);
    m = mig(g, 3, 1);
    assert_string_equal(m.uuid, MIG_1);
    assert_int_equal(m.cuda_index, -1);
    assert_int_equal(m.gpu_instance_id, 9);
    assert_int_equal(m.slices, 1);
    assert_int_equal(m.used_bytes, 3 * GiB);
    m = mig(g, 3, 2);
    assert_int_equal(m.mig_index, 2);
    assert_int_equal(m.compute_instance_id, 1);
    gpuprobe_mig_device none = GPUPROBE_MIG_DEVICE_INIT;
    assert_int_equal(gpuprobe_gpus_mig_device(g, 3, 3, &none), GPUPROBE_ERR_NOT_FOUND);
    assert_int_equal(gpuprobe_gpus_mig_device(g, 0, 0, &none), GPUPROBE_ERR_NOT_FOUND);
    assert_int_equal(none.mig_index, -1); /* untouched */

    /* The processes: compute and graphics merged; another namespace's PID
     * as NVML gives it; memory NVML cannot give; each MIG device's. */
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_PROCESSES), 2);
    gpuprobe_process p = proc(g, 0, 0);
    assert_int_equal(p.pid, 4242);
    assert_int_equal(p.type, GPUPROBE_PROCESS_COMPUTE);
    assert_int_equal(p.used_bytes, 20 * GiB);
    assert_int_equal(p.mig_index, -1);
    assert_int_equal(p.gpu_instance_id, -1);
    p = proc(g, 0, 1);
    assert_int_equal(p.pid, 1777);
    assert_int_equal(p.type, GPUPROBE_PROCESS_GRAPHICS);
    assert_int_equal(gint(g, 2, GPUPROBE_GPU_PROCESSES), 2);
    p = proc(g, 2, 0);
    assert_int_equal(p.pid, 5151);
    assert_int_equal(p.type, GPUPROBE_PROCESS_COMPUTE | GPUPROBE_PROCESS_GRAPHICS);
    assert_int_equal(p.used_bytes, 40 * GiB);
    assert_int_equal(proc(g, 2, 1).pid, OTHER_PID);
    p = proc(g, 1, 0);
    assert_int_equal(p.pid, 6262);
    assert_true(p.used_bytes == GPUPROBE_UNKNOWN_BYTES);
    assert_int_equal(gint(g, 3, GPUPROBE_GPU_PROCESSES), 2);
    p = proc(g, 3, 1);
    assert_int_equal(p.pid, 8484);
    assert_int_equal(p.used_bytes, 3 * GiB);
    assert_int_equal(p.mig_index, 1);
    assert_int_equal(p.gpu_instance_id, 9);
    assert_int_equal(p.compute_instance_id, 0);
    assert_int_equal(proc(g, 3, 0).mig_index, 0);
    gpuprobe_process q = GPUPROBE_PROCESS_INIT;
    assert_int_equal(gpuprobe_gpus_process(g, 3, 2, &q), GPUPROBE_ERR_NOT_FOUND);

    /* The same numberings through the CUDA devices. */
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 4);
    int64_t v = -1;
    EXPECT(ctx, gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NVML_INDEX, &v), GPUPROBE_OK);
    assert_int_equal(v, 3); /* cuda:1, MIG device 0 of GPU 3 */
    untouched();
    gpuprobe_gpus_destroy(g);
    gpuprobe_context_destroy(ctx);
}

/* A GPU that refuses its own queries: unknown and why; its MIG devices
 * and their processes are there. */
static void refused_gpu(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\nnvml_access = denied\n[mig]\nprofile = 1g.18gb\n"
          "process = 77:3GiB\n[mig]\nprofile = 1g.18gb\n");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_gpus *g = read_gpus(ctx);
    /* version 2 refused, then version 1: the last answer is the reason */
    unknown(g, 0, GPUPROBE_GPU_TOTAL_BYTES, "nvmlDeviceGetMemoryInfo failed: Insufficient Permissions");
    unknown(g, 0, GPUPROBE_GPU_TEMPERATURE_C, "nvmlDeviceGetTemperature failed");
    assert_string_equal(gstr(g, 0, GPUPROBE_GPU_NAME), "NVIDIA H200");
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_MIG_DEVICES), 2);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_PROCESSES), 1);
    assert_int_equal(proc(g, 0, 0).pid, 77);
    assert_int_equal(mig(g, 0, 1).gpu_instance_id, 2);
    /* without CUDA_VISIBLE_DEVICES a process sees the first MIG device */
    assert_int_equal(mig(g, 0, 0).cuda_index, 0);
    assert_int_equal(mig(g, 0, 1).cuda_index, -1);
    untouched();
    gpuprobe_gpus_destroy(g);
    gpuprobe_context_destroy(ctx);
}

/* Two GPUs with a process each, and NVML failing as rule says: a new
 * context (*ctx) and what gpuprobe_gpus_read() gives there (want). */
static gpuprobe_gpus *failing(const char *rule, gpuprobe_status want, gpuprobe_context **ctx)
{
    char conf[512];
    snprintf(conf, sizeof conf,
             "%s\n[gpu]\npreset = H200\npci = 0000:19:00.0\nprocess = 1:1GiB\n"
             "[gpu]\npreset = A100-80GB\npci = 0000:2a:00.0\nprocess = 2:2GiB\n", rule);
    fleet(conf);
    *ctx = new_ctx();
    gpuprobe_gpus *g = (gpuprobe_gpus *)ctx;
    EXPECT(*ctx, gpuprobe_gpus_read(*ctx, 0, &g), want);
    if (want != GPUPROBE_OK)
        assert_null(g);
    return g;
}

/* NVML failing: the count, one GPU's handle, a process list. */
static void nvml_failing(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    failing("fail = nvmlDeviceGetCount_v2:1=NVML_ERROR_UNKNOWN", GPUPROBE_ERR_CUDA, &ctx);
    assert_contains(gpuprobe_last_error(ctx), "nvmlDeviceGetCount_v2 failed");
    gpuprobe_context_destroy(ctx);

    /* The second handle by index (GPU 1's: enumeration finds the CUDA
     * devices by UUID): that GPU is listed, every field unknown but its
     * index. */
    gpuprobe_gpus *g = failing("fail = nvmlDeviceGetHandleByIndex_v2:2=NVML_ERROR_GPU_IS_LOST",
                               GPUPROBE_OK, &ctx);
    assert_int_equal(gpuprobe_gpus_count(g), 2);
    assert_int_equal(gint(g, 1, GPUPROBE_GPU_INDEX), 1);
    const char *s = NULL;
    assert_int_equal(gpuprobe_gpus_get_string(g, 1, GPUPROBE_GPU_NAME, &s), GPUPROBE_ERR_UNSUPPORTED);
    assert_null(s);
    assert_contains(gpuprobe_gpus_why(g, 1, GPUPROBE_GPU_NAME),
                    "nvmlDeviceGetHandleByIndex_v2 failed: Simulated NVML error (NVML error 15)");
    unknown(g, 1, GPUPROBE_GPU_PROCESSES, "(NVML error 15)");
    unknown(g, 1, GPUPROBE_GPU_CUDA_INDEX, "nvmlDeviceGetHandleByIndex_v2 failed");
    assert_string_equal(gstr(g, 0, GPUPROBE_GPU_NAME), "NVIDIA H200");
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_PROCESSES), 1);
    gpuprobe_gpus_destroy(g);
    gpuprobe_context_destroy(ctx);

    /* The graphics list of the second GPU: its processes are not listed. */
    g = failing("fail = nvmlDeviceGetGraphicsRunningProcesses_v3:2", GPUPROBE_OK, &ctx);
    assert_int_equal(gint(g, 0, GPUPROBE_GPU_PROCESSES), 1);
    unknown(g, 1, GPUPROBE_GPU_PROCESSES, "nvmlDeviceGetGraphicsRunningProcesses_v3 failed");
    gpuprobe_process p = GPUPROBE_PROCESS_INIT;
    assert_int_equal(gpuprobe_gpus_process(g, 1, 0, &p), GPUPROBE_ERR_NOT_FOUND);
    gpuprobe_gpus_destroy(g);
    gpuprobe_context_destroy(ctx);

    /* The driver's version. */
    g = failing("fail = nvmlSystemGetDriverVersion:1", GPUPROBE_OK, &ctx);
    assert_int_equal(gpuprobe_gpus_get_string(g, 0, GPUPROBE_GPU_DRIVER_VERSION, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_gpus_why(g, 1, GPUPROBE_GPU_DRIVER_VERSION),
                    "nvmlSystemGetDriverVersion failed");
    gpuprobe_gpus_destroy(g);
    gpuprobe_context_destroy(ctx);
}

/* NVML off, the arguments, the fields, the sizes. */
static void arguments(void **state)
{
    (void)state;
    fleet("[gpu]\npreset = H200\nprocess = 5:1GiB\n");
    setenv("GPUPROBE_NVML", "off", 1);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_gpus *g = (gpuprobe_gpus *)&g;
    EXPECT(ctx, gpuprobe_gpus_read(ctx, 0, &g), GPUPROBE_ERR_UNSUPPORTED);
    assert_null(g);
    assert_contains(gpuprobe_last_error(ctx), "NVML is not usable: GPUPROBE_NVML turns NVML off");
    gpuprobe_context_destroy(ctx);
    unsetenv("GPUPROBE_NVML");
    setenv("GPUPROBE_CUDA", "off", 1);
    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_gpus_read(ctx, 0, &g), GPUPROBE_ERR_UNSUPPORTED);
    gpuprobe_context_destroy(ctx);
    unsetenv("GPUPROBE_CUDA");

    ctx = new_ctx();
    EXPECT(ctx, gpuprobe_gpus_read(ctx, 1, &g), GPUPROBE_ERR_INVALID_ARGUMENT);
    EXPECT(ctx, gpuprobe_gpus_read(ctx, 0, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_gpus_read(NULL, 0, &g), GPUPROBE_ERR_INVALID_ARGUMENT);
    g = read_gpus(ctx);
    int64_t v = -99;
    const char *s = NULL;
    assert_int_equal(gpuprobe_gpus_get_int(g, 1, GPUPROBE_GPU_INDEX, &v), GPUPROBE_ERR_NOT_FOUND);
    assert_int_equal(gpuprobe_gpus_get_int(g, 0, GPUPROBE_GPU_NAME, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_gpus_get_string(g, 0, GPUPROBE_GPU_INDEX, &s), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_gpus_get_int(g, 0, (gpuprobe_gpu_field)24, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_gpus_get_int(g, 0, (gpuprobe_gpu_field)-1, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_gpus_get_int(g, 0, GPUPROBE_GPU_INDEX, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_gpus_get_int(NULL, 0, GPUPROBE_GPU_INDEX, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(v, -99);
    assert_null(s);
    assert_string_equal(gpuprobe_gpus_why(NULL, 0, GPUPROBE_GPU_INDEX), "no snapshot");
    assert_string_equal(gpuprobe_gpus_why(g, 1, GPUPROBE_GPU_INDEX), "no such GPU");
    assert_string_equal(gpuprobe_gpus_why(g, 0, (gpuprobe_gpu_field)99), "unknown field");
    assert_int_equal(gpuprobe_gpus_count(NULL), 0);

    /* A struct smaller than 1.2's is refused; a larger one (a later
     * program's) keeps its tail. */
    struct {
        gpuprobe_process p;
        uint64_t tail;
    } big = {GPUPROBE_PROCESS_INIT, 0x5eed};
    big.p.size = sizeof big;
    assert_int_equal(gpuprobe_gpus_process(g, 0, 0, &big.p), GPUPROBE_OK);
    assert_int_equal(big.p.pid, 5);
    assert_int_equal(big.p.size, sizeof big);
    assert_int_equal(big.tail, 0x5eed);
    gpuprobe_process small = GPUPROBE_PROCESS_INIT;
    small.size = offsetof(gpuprobe_process, compute_instance_id);
    assert_int_equal(gpuprobe_gpus_process(g, 0, 0, &small), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(small.pid, 0);
    assert_int_equal(gpuprobe_gpus_process(g, 0, 0, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_mig_device m = GPUPROBE_MIG_DEVICE_INIT;
    m.size = sizeof m - 1;
    fleet("[gpu]\npreset = H200\n[mig]\n");
    gpuprobe_gpus_destroy(g);
    gpuprobe_context_destroy(ctx);
    ctx = new_ctx();
    g = read_gpus(ctx);
    assert_int_equal(gpuprobe_gpus_mig_device(g, 0, 0, &m), GPUPROBE_ERR_INVALID_ARGUMENT);
    m.size = sizeof m;
    assert_int_equal(gpuprobe_gpus_mig_device(g, 0, 0, &m), GPUPROBE_OK);
    assert_string_equal(m.profile, "1g.19gb"); /* an eighth of the H200, made up */
    gpuprobe_gpus_destroy(g);
    gpuprobe_gpus_destroy(NULL);
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(node_of_four, setup),
        cmocka_unit_test_setup(refused_gpu, setup),
        cmocka_unit_test_setup(nvml_failing, setup),
        cmocka_unit_test_setup(arguments, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
