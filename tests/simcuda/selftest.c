/*
 * selftest.c - tests of the simulated NVIDIA stack itself, through the CUDA
 * APIs as an application calls them (linked against the simulated
 * libcuda.so.1, libcudart.so.13, libcublas.so.13 and libnvidia-ml.so.1).
 * Each documented behaviour the scenario tests rely on is checked here, so
 * that a scenario failure points at the library, not at the simulation.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cublas_v2.h>

#include "nvml_decl.h"
#include "sim.h"
#include "simcuda.h"

#define MiB (UINT64_C(1) << 20)

static const char *const uuid0 = "GPU-11111111-2222-4333-8444-555555555555";
static const char *const uuid1 = "GPU-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
static const char *const uuid2 = "GPU-abcdef01-0000-4000-8000-000000000002";
static const char *const mig0 = "MIG-99999999-8888-4777-8666-555555555555";

/* Three GPUs listed fastest first but out of PCI order, the first one with
 * a MIG-capable sibling config used by some tests. */
static void fleet3(void)
{
    char text[1024];
    snprintf(text, sizeof text,
             "context_bytes = 300MiB\n"
             "[gpu]\npreset = H200\nuuid = %s\npci = 0000:c1:00.0\nfree = 100GiB\n"
             "[gpu]\npreset = A100-40GB\nuuid = %s\npci = 0000:21:00.0\n"
             "[gpu]\npreset = T4\nuuid = %s\npci = 0000:41:00.0\n",
             uuid0, uuid1, uuid2);
    assert_int_equal(simcuda_configure(text), 0);
}

static void configure(const char *text)
{
    if (simcuda_configure(text) != 0)
        fail_msg("configuration refused: %s", simcuda_error());
}

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("CUDA_DEVICE_ORDER");
    unsetenv("NVIDIA_TF32_OVERRIDE");
    return 0;
}

/* ---- configuration ---- */

static void config_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[gpu]\nnmae = x\n",                   /* unknown key */
        "[gpu]\ntotal = lots\n",               /* bad bytes */
        "[gpu]\ncc = nine\n",                  /* bad cc */
        "[mig]\ntotal = 1GiB\n",               /* no parent */
        "[gpu]\nuuid = MIG-11111111-2222-4333-8444-555555555555\n", /* wrong prefix */
        "[gpu]\nuuid = GPU-1\n",               /* short */
        "[gpu]\ntotal = 1GiB\nfree = 2GiB\n",  /* free > total */
        "[gpu]\npci = 0000:19:00.0\n[gpu]\npci = 0000:19:00.0\n", /* same bus id */
        "fail = cudaMalloc\n",                 /* no nth */
        "fail = cudaMalloc:1=cudaErrorNoSuchThing\n",
        "fault_async = cudaMalloc:1\n",
        "mode = lazy\n",
        "[gpu]\npreset = Z80\n",
        "[cpu]\n",
        "gemm_bug = sideways\n",
        "[gpu]\nmode = deferred\n",           /* global key in a section */
        "[gpu]\nname = a\\qb\n",              /* unknown escape */
        "[gpu]\nname = a\\x4\n",              /* short escape */
        "[gpu]\nname = a\\x00b\n",            /* a NUL cannot be a name byte */
        "[gpu]\nname = a\\\n",               /* a backslash at the end */
        "[gpu]\nutilization = 101\n",          /* not a percent */
        "[gpu]\npower = -3\n",                 /* not watts */
        "[gpu]\npcie = 5x3\n",                 /* no such width */
        "[gpu]\nprocess = 4242\n",             /* no memory */
        "[gpu]\nprocess = 0:1GiB\n",           /* no such PID */
        "[gpu]\nprocess = 7:1GiB:video\n",     /* no such kind */
        "[gpu]\nprocess = 7:lots:graphics\n",  /* bad bytes */
        "[gpu]\nprocess = 7::compute\n",       /* no bytes */
        "[gpu]\nprofile = 1g.10gb\n",          /* a MIG instance's */
        "[gpu]\npreset = H100\n[mig]\ngi = -1\n", /* not an id */
        "[gpu]\nnvml_access = maybe\n",
        "[mig]\nutilization = 5\n",            /* a GPU's figure */
        "[gpu]\npreset = L4\n[mig]\n",         /* no MIG on that board */
    };
    configure("[gpu]\npreset = T4\n");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(simcuda_configure(bad[i]), -1);
        assert_true(strlen(simcuda_error()) > 0);
    }
    /* The state is untouched by a refused configuration. */
    assert_int_equal(simcuda_unit_count(), 1);
    /* Comments, ';' separators, presets then overrides. */
    configure("driver_version = 12.4 # old\n[gpu]; preset = H200; name = Custom; sms = 7");
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(v, 12040);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    char name[64];
    int sms = 0;
    assert_int_equal(cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
    assert_string_equal(name, "Custom");
    assert_int_equal(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
    assert_int_equal(sms, 7);
    assert_int_equal(simcuda_set("mode = deferred"), 0);
    assert_int_equal(simcuda_set("[gpu]"), -1);
    /* String escapes: the bytes a line cannot hold, and raw ones. */
    configure("[gpu]; name = \\x20q\"\\x1b[31m\\x3b\\x23\\n\\xff\\\\z\\x20 # comment");
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
    assert_string_equal(name, " q\"\x1b[31m;#\n\xff\\z ");
}

/* ---- the driver ---- */

static void driver_basics(void **state)
{
    (void)state;
    fleet3();
    int n = -1;
    assert_int_equal(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 3);
    CUdevice d;
    assert_int_equal(cuDeviceGet(&d, 3), CUDA_ERROR_INVALID_DEVICE);
    assert_int_equal(cuDeviceGet(&d, 1), CUDA_SUCCESS);
    char name[8];
    assert_int_equal(cuDeviceGetName(name, sizeof name, d), CUDA_SUCCESS);
    assert_string_equal(name, "NVIDIA "); /* truncated to len - 1 */
    CUuuid u;
    assert_int_equal(cuDeviceGetUuid(&u, d), CUDA_SUCCESS);
    assert_int_equal((unsigned char)u.bytes[0], 0xaa);
    assert_int_equal((unsigned char)u.bytes[15], 0xee);
    size_t total = 0;
    assert_int_equal(cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
    assert_int_equal(total, UINT64_C(150754820096));
    int cc = 0, bus = 0;
    assert_int_equal(cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 2), CUDA_SUCCESS);
    assert_int_equal(cc, 7);
    assert_int_equal(cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0), CUDA_SUCCESS);
    assert_int_equal(bus, 0xc1);
    char pci[32];
    assert_int_equal(cuDeviceGetPCIBusId(pci, sizeof pci, 1), CUDA_SUCCESS);
    assert_string_equal(pci, "0000:21:00.0");
    const char *s = NULL;
    assert_int_equal(cuGetErrorName(CUDA_ERROR_NO_DEVICE, &s), CUDA_SUCCESS);
    assert_string_equal(s, "CUDA_ERROR_NO_DEVICE");
    assert_int_equal(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    assert_string_equal(cudaGetErrorName(cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver");
    assert_string_equal(cublasGetStatusName(CUBLAS_STATUS_ARCH_MISMATCH), "CUBLAS_STATUS_ARCH_MISMATCH");

    /* cuInit decides once, from the configuration. */
    configure("cuinit_error = CUDA_ERROR_UNKNOWN\n[gpu]\n");
    assert_int_equal(cuInit(0), CUDA_ERROR_UNKNOWN);
    assert_int_equal(cuDeviceGetCount(&n), CUDA_ERROR_UNKNOWN);
    configure("");
    assert_int_equal(cuInit(0), CUDA_ERROR_NO_DEVICE);
}

/* CUDA_VISIBLE_DEVICES, as the CUDA documentation states it. */
static void visible_devices(void **state)
{
    (void)state;
    static const struct {
        const char *cvd, *order;
        int n;
        int units[3];
    } cases[] = {
        {NULL, NULL, 3, {0, 1, 2}},
        {"", NULL, 0, {0}},
        {"2,0", NULL, 2, {2, 0}},
        {"0,2,-1,1", NULL, 2, {0, 2}},    /* ends at the invalid entry */
        {"1,1,0", NULL, 1, {1}},          /* a repeat is invalid */
        {"7", NULL, 0, {0}},
        {" 1 ", NULL, 1, {1}},
        {"GPU-abcd", NULL, 1, {2}},       /* unique prefix */
        {"GPU-a", NULL, 0, {0}},          /* ambiguous prefix */
        {"GPU-AAAAAAAA,0", NULL, 2, {1, 0}},
        {"gpu", NULL, 0, {0}},
        {NULL, "PCI_BUS_ID", 3, {1, 2, 0}},
        {"0", "PCI_BUS_ID", 1, {1}},      /* indices follow the order */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].cvd)
            setenv("CUDA_VISIBLE_DEVICES", cases[i].cvd, 1);
        else
            unsetenv("CUDA_VISIBLE_DEVICES");
        if (cases[i].order)
            setenv("CUDA_DEVICE_ORDER", cases[i].order, 1);
        else
            unsetenv("CUDA_DEVICE_ORDER");
        fleet3();
        CUresult r = cuInit(0);
        int n = -1;
        if (cases[i].n == 0) {
            assert_int_equal(r, CUDA_ERROR_NO_DEVICE);
        } else {
            assert_int_equal(r, CUDA_SUCCESS);
            assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
            assert_int_equal(n, cases[i].n);
            for (int k = 0; k < n; k++)
                assert_int_equal(simcuda_unit_of_ordinal(k), cases[i].units[k]);
        }
    }
    unsetenv("CUDA_DEVICE_ORDER");
    /* MIG: a MIG-enabled GPU is not a CUDA device; its instances are, one
     * per process. */
    char text[512];
    snprintf(text, sizeof text,
             "[gpu]\npreset = A100-40GB\n[mig]\nuuid = %s\ntotal = 4GiB\n[mig]\n"
             "[gpu]\npreset = T4\n", mig0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    configure(text);
    int n = 0;
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(simcuda_unit_of_ordinal(0), 1); /* the first instance */
    assert_int_equal(simcuda_unit_of_ordinal(1), 3);
    size_t total = 0;
    assert_int_equal(cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
    assert_int_equal(total, UINT64_C(4) << 30);
    setenv("CUDA_VISIBLE_DEVICES", "MIG-99999999,0,1", 1);
    configure(text);
    assert_int_equal(cuInit(0), CUDA_SUCCESS); /* index 0 is MIG-enabled: the list ends */
    assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(simcuda_unit_of_ordinal(0), 1);
    setenv("CUDA_VISIBLE_DEVICES", "1,MIG-99999999", 1);
    configure(text);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(simcuda_unit_of_ordinal(1), 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

static void primary_contexts(void **state)
{
    (void)state;
    fleet3();
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.free_bytes, UINT64_C(100) << 30);
    size_t f = 0, t = 0;
    assert_int_equal(cuMemGetInfo(&f, &t), CUDA_ERROR_INVALID_CONTEXT);
    unsigned flags = 9;
    int active = 9;
    assert_int_equal(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    assert_int_equal(active, 0);
    CUcontext c0 = NULL, c1 = NULL, cur = NULL;
    assert_int_equal(cuDevicePrimaryCtxRetain(&c0, 0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&c1, 0), CUDA_SUCCESS);
    assert_ptr_equal(c0, c1);
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.context_refs, 2);
    assert_int_equal(st.free_bytes, (UINT64_C(100) << 30) - 300 * MiB);
    assert_int_equal(cuCtxPushCurrent(c0), CUDA_SUCCESS);
    assert_int_equal(cuMemGetInfo(&f, &t), CUDA_SUCCESS);
    assert_int_equal(f, (UINT64_C(100) << 30) - 300 * MiB);
    assert_int_equal(t, UINT64_C(150754820096));
    assert_int_equal(cuCtxPopCurrent(&cur), CUDA_SUCCESS);
    assert_ptr_equal(cur, c0);
    assert_int_equal(cuCtxPopCurrent(&cur), CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_false(st.context_active);
    assert_int_equal(st.free_bytes, UINT64_C(100) << 30);
    assert_int_equal(cuCtxPushCurrent(c0), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    /* Not enough memory for a context. */
    configure("[gpu]\ntotal = 1GiB\nfree = 100MiB\n");
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&c0, 0), CUDA_ERROR_OUT_OF_MEMORY);
}

/* The runtime: implicit contexts and the reference it keeps. */
static void runtime_contexts(void **state)
{
    (void)state;
    fleet3();
    int n = 0, dev = -1;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(n, 3);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_false(st.context_active); /* counting creates no context */
    void *p = NULL;
    assert_int_equal(cudaMalloc(&p, 1000), cudaSuccess);
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_true(st.context_active);
    assert_true(st.runtime_holds);
    assert_int_equal(st.context_refs, 1);
    assert_int_equal(st.allocated_bytes, 2 << 20); /* a whole 2 MiB page */
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 0);
    /* cudaSetDevice creates the primary context of the device at once. */
    assert_int_equal(cudaSetDevice(2), cudaSuccess);
    assert_int_equal(simcuda_unit(2, &st), 0);
    assert_true(st.context_active);
    assert_int_equal(cudaSetDevice(3), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    /* A pushed primary context: the runtime takes a reference of its own. */
    CUcontext c1 = NULL;
    assert_int_equal(cuDevicePrimaryCtxRetain(&c1, 1), CUDA_SUCCESS);
    assert_int_equal(cuCtxPushCurrent(c1), CUDA_SUCCESS);
    void *q = NULL;
    assert_int_equal(cudaMalloc(&q, 10), cudaSuccess);
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 1);
    assert_int_equal(cuCtxPopCurrent(NULL), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
    assert_int_equal(simcuda_unit(1, &st), 0);
    assert_true(st.context_active); /* the runtime's reference keeps it */
    assert_int_equal(st.context_refs, 1);
    assert_int_equal(st.allocations, 1);
    /* With unified addressing cudaFree takes a pointer of any device. */
    assert_int_equal(cudaFree(q), cudaSuccess);
    assert_int_equal(simcuda_unit(1, &st), 0);
    assert_int_equal(st.allocations, 0);
}

static void runtime_memory(void **state)
{
    (void)state;
    configure("[gpu]\ntotal = 2GiB\ncontext_bytes = 1GiB\n");
    void *d = NULL, *h = NULL;
    assert_int_equal(cudaMalloc(&d, (size_t)1 << 31), cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    size_t f = 0, t = 0;
    assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
    assert_int_equal(f, UINT64_C(1) << 30);
    assert_int_equal(cudaMalloc(&d, 4096), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
    assert_int_equal(f, (UINT64_C(1) << 30) - (2 << 20)); /* a page */
    assert_int_equal(cudaMallocHost(&h, 4096), cudaSuccess);
    assert_int_equal(simcuda_pinned_count(), 1);
    unsigned char src[4096], back[4096];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7);
    assert_int_equal(cudaMemcpy(d, src, sizeof src, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(src, back, sizeof src);
    /* Out of the allocation, wrong direction, bad kind. */
    assert_int_equal(cudaMemcpy(d, src, 4097, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy((char *)d + 4000, src, 100, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(back, d, 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(back, d, 16, (enum cudaMemcpyKind)9), cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaMemcpy(back, d, 16, cudaMemcpyDefault), cudaSuccess);
    assert_int_equal(cudaMemset(d, 0xab, 16), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, d, 16, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(((unsigned char *)h)[15], 0xab);
    assert_int_equal(cudaFree((char *)d + 1), cudaErrorInvalidValue);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaErrorInvalidValue);
    assert_int_equal(cudaFreeHost(h), cudaSuccess);
    assert_int_equal(simcuda_pinned_count(), 0);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.allocations, 0);
}

/* Allocations take whole 2 MiB pages, and the driver keeps back part of
 * the free memory (alloc_reserve; by default 1/2048 of the total in whole
 * pages): the largest allocation is the free memory less that, in pages,
 * while cudaMemGetInfo still counts it free. */
static void runtime_pages_and_reserve(void **state)
{
    (void)state;
    const size_t MiB2 = (size_t)1 << 21;
    static const struct {
        const char *conf;
        size_t largest; /* free 7692 MiB less the reserve */
    } cases[] = {
        {"[gpu]\ntotal = 8GiB\ncontext_bytes = 500MiB\n", (size_t)7688 << 20},
        {"[gpu]\ntotal = 8GiB\ncontext_bytes = 500MiB\nalloc_reserve = 0\n", (size_t)7692 << 20},
        {"[gpu]\ntotal = 8GiB\ncontext_bytes = 500MiB\nalloc_reserve = 1GiB\n", (size_t)6668 << 20},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        configure(cases[i].conf);
        void *d = NULL;
        size_t f = 0, t = 0;
        assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
        assert_int_equal(f, (size_t)7692 << 20);
        assert_int_equal(cudaMalloc(&d, cases[i].largest + 1), cudaErrorMemoryAllocation);
        cudaGetLastError();
        assert_int_equal(cudaMalloc(&d, cases[i].largest), cudaSuccess);
        assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
        assert_int_equal(f, ((size_t)7692 << 20) - cases[i].largest);
        assert_int_equal(cudaFree(d), cudaSuccess);
        /* one byte past a page takes the next page */
        assert_int_equal(cudaMalloc(&d, cases[i].largest - MiB2 + 1), cudaSuccess);
        assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
        assert_int_equal(f, ((size_t)7692 << 20) - cases[i].largest);
        assert_int_equal(cudaFree(d), cudaSuccess);
    }
    /* a page for a byte */
    configure("[gpu]\ntotal = 8GiB\ncontext_bytes = 500MiB\n");
    void *b = NULL;
    size_t f = 0, t = 0;
    assert_int_equal(cudaMalloc(&b, 1), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
    assert_int_equal(f, ((size_t)7692 << 20) - MiB2);
    assert_int_equal(cudaFree(b), cudaSuccess);
}

/* A device pointer is not host memory: dereferencing it faults. */
static void device_pointer_faults_on_host(void **state)
{
    (void)state;
    configure("[gpu]\n");
    void *d = NULL;
    assert_int_equal(cudaMalloc(&d, 64), cudaSuccess);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "w", stderr);
        (void)null;
        signal(SIGSEGV, SIG_DFL); /* not the test framework's handler */
        signal(SIGBUS, SIG_DFL);
        volatile unsigned char *p = d;
        unsigned char v = *p;
        _exit(v == 0 ? 0 : 0); /* reached only if the read did not fault */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0));
    assert_int_equal(cudaFree(d), cudaSuccess);
}

/* ---- streams, events, deferred mode ---- */

static void events_and_deferred(void **state)
{
    (void)state;
    configure("mode = deferred\n[gpu]\ncopy_gbps = 1\n");
    cudaStream_t s;
    cudaEvent_t a, b, nt;
    float ms = -1;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaEventSynchronize(a), cudaSuccess); /* never recorded */
    void *d = NULL, *h = NULL;
    assert_int_equal(cudaMalloc(&d, 1000000), cudaSuccess);
    assert_int_equal(cudaMallocHost(&h, 1000000), cudaSuccess);
    memset(h, 1, 1000000);
    assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(d, h, 1000000, cudaMemcpyHostToDevice, s), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(d, 7, 10, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(h, d, 1000000, cudaMemcpyDeviceToHost, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(d, 7, 10, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(nt, s), cudaSuccess);
    /* Queued, not run: the pinned buffer is untouched. */
    assert_int_equal(((unsigned char *)h)[0], 1);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.pending_ops, 7);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(((unsigned char *)h)[0], 7);
    assert_int_equal(((unsigned char *)h)[10], 1);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    /* Modelled: two 1 MB copies at 1 GB/s, a memset, 2 us per op. */
    assert_true(fabs(ms - 2.006) < 0.01);
    assert_int_equal(cudaEventElapsedTime(&ms, a, nt), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaEventQuery(nt), cudaErrorNotReady); /* runs one op */
    assert_int_equal(cudaEventQuery(nt), cudaSuccess);
    /* A pageable source is taken at the call, even in deferred mode. */
    unsigned char pageable[16];
    memset(pageable, 3, sizeof pageable);
    assert_int_equal(cudaMemcpyAsync(d, pageable, 16, cudaMemcpyHostToDevice, s), cudaSuccess);
    memset(pageable, 4, sizeof pageable);
    assert_int_equal(cudaMemcpyAsync(pageable, d, 16, cudaMemcpyDeviceToHost, s), cudaSuccess);
    assert_int_equal(pageable[0], 3); /* into pageable memory: waits */
    /* Freeing synchronises; destroyed handles are invalid. */
    assert_int_equal(cudaMemsetAsync(d, 9, 1, s), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFreeHost(h), cudaSuccess);
    assert_int_equal(cudaEventDestroy(a), cudaSuccess);
    assert_int_equal(cudaEventDestroy(a), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaEventDestroy(b), cudaSuccess);
    assert_int_equal(cudaEventDestroy(nt), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.streams + st.events + st.allocations + st.pending_ops, 0);
}

/* ---- cuBLAS ---- */

static float frand(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (float)((int)(*s >> 41) - (1 << 22)) / (float)(1 << 22);
}

typedef struct gemm_case {
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc;
} gemm_case;

/* Run one fp32 gemm through the simulated cuBLAS and compare with a
 * column-major reference computed here. */
static void check_gemm(cublasHandle_t h, const gemm_case *g, float alpha, float beta)
{
    int arows = g->ta == CUBLAS_OP_N ? g->m : g->k, acols = g->ta == CUBLAS_OP_N ? g->k : g->m;
    int brows = g->tb == CUBLAS_OP_N ? g->k : g->n, bcols = g->tb == CUBLAS_OP_N ? g->n : g->k;
    size_t na = (size_t)g->lda * acols, nb = (size_t)g->ldb * bcols, nc = (size_t)g->ldc * g->n;
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *R = malloc(nc * 4);
    assert_non_null(A);
    assert_non_null(B);
    assert_non_null(C);
    assert_non_null(R);
    uint64_t seed = 42;
    for (size_t i = 0; i < na; i++) A[i] = frand(&seed);
    for (size_t i = 0; i < nb; i++) B[i] = frand(&seed);
    for (size_t i = 0; i < nc; i++) C[i] = frand(&seed);
    (void)arows;
    (void)brows;
    for (int j = 0; j < g->n; j++)
        for (int i = 0; i < g->m; i++) {
            double acc = 0;
            for (int l = 0; l < g->k; l++) {
                double a = g->ta == CUBLAS_OP_N ? A[i + (size_t)l * g->lda] : A[l + (size_t)i * g->lda];
                double b = g->tb == CUBLAS_OP_N ? B[l + (size_t)j * g->ldb] : B[j + (size_t)l * g->ldb];
                acc += a * b;
            }
            R[i + (size_t)j * g->ldc] = (float)(alpha * acc + beta * C[i + (size_t)j * g->ldc]);
        }
    void *dA, *dB, *dC;
    assert_int_equal(cudaMalloc(&dA, na * 4), cudaSuccess);
    assert_int_equal(cudaMalloc(&dB, nb * 4), cudaSuccess);
    assert_int_equal(cudaMalloc(&dC, nc * 4), cudaSuccess);
    assert_int_equal(cudaMemcpy(dA, A, na * 4, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(dB, B, nb * 4, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(dC, C, nc * 4, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cublasGemmEx(h, g->ta, g->tb, g->m, g->n, g->k, &alpha, dA, CUDA_R_32F, g->lda,
                                  dB, CUDA_R_32F, g->ldb, &beta, dC, CUDA_R_32F, g->ldc,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     CUBLAS_STATUS_SUCCESS);
    float *out = malloc(nc * 4);
    assert_non_null(out);
    assert_int_equal(cudaMemcpy(out, dC, nc * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int j = 0; j < g->n; j++)
        for (int i = 0; i < g->ldc; i++) {
            size_t idx = i + (size_t)j * g->ldc;
            if (i < g->m)
                assert_true(fabsf(out[idx] - R[idx]) <= 1e-5f * (1.0f + (float)g->k));
            else
                assert_true(out[idx] == C[idx]); /* rows past m untouched */
        }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C);
    free(R);
    free(out);
}

static void gemm_column_major(void **state)
{
    (void)state;
    configure("[gpu]\npreset = H200\n");
    cublasHandle_t h;
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.workspaces, 1);
    assert_int_equal(st.allocated_bytes, 32 * MiB); /* Hopper: 32 MiB */
    static const gemm_case cases[] = {
        {CUBLAS_OP_N, CUBLAS_OP_N, 5, 3, 4, 5, 4, 5},
        {CUBLAS_OP_T, CUBLAS_OP_N, 5, 3, 4, 4, 4, 5},
        {CUBLAS_OP_N, CUBLAS_OP_T, 5, 3, 4, 7, 3, 6},
        {CUBLAS_OP_C, CUBLAS_OP_T, 17, 9, 13, 13, 9, 20},
        {CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_gemm(h, &cases[i], 1.0f, 0.0f);
        check_gemm(h, &cases[i], -0.5f, 2.0f);
    }
    /* The documented argument errors. */
    float one = 1, zero = 0;
    void *d;
    assert_int_equal(cudaMalloc(&d, 4096), cudaSuccess);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 3, d,
                                  CUDA_R_32F, 4, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 6, &one, d, CUDA_R_32F, 4, d,
                                  CUDA_R_32F, 6, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_INVALID_VALUE); /* lda < k */
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, 4, 4, 6, &one, d, CUDA_R_32F, 4, d,
                                  CUDA_R_32F, 3, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_INVALID_VALUE); /* ldb < n */
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d,
                                  CUDA_R_32F, 4, &zero, d, CUDA_R_32F, 3, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_INVALID_VALUE); /* ldc < m */
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, d, CUDA_R_32F, 4, d,
                                  CUDA_R_32F, 4, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_INVALID_VALUE);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_16F, 4, d,
                                  CUDA_R_16BF, 4, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_NOT_SUPPORTED);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d,
                                  CUDA_R_32F, 4, &zero, d, CUDA_R_16F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_NOT_SUPPORTED);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_16F, 4, d,
                                  CUDA_R_16F, 4, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F_FAST_TF32,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_NOT_SUPPORTED);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.allocations, 0);
}

/* One element product through cublasGemmEx (1x1x1): a * b. */
static float product(cublasHandle_t h, float a, float b, cublasComputeType_t ct, int bug_k2)
{
    float in[2] = {a, bug_k2 ? a : 0}, w[2] = {b, bug_k2 ? b : 0}, out = 0, one = 1, zero = 0;
    void *dA, *dB, *dC;
    int k = bug_k2 ? 2 : 1;
    assert_int_equal(cudaMalloc(&dA, 8), cudaSuccess);
    assert_int_equal(cudaMalloc(&dB, 8), cudaSuccess);
    assert_int_equal(cudaMalloc(&dC, 4), cudaSuccess);
    assert_int_equal(cudaMemcpy(dA, in, 8, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(dB, w, 8, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, k, &one, dA, CUDA_R_32F, 1,
                                  dB, CUDA_R_32F, k, &zero, dC, CUDA_R_32F, 1, ct,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaMemcpy(&out, dC, 4, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    return out;
}

static void gemm_precisions(void **state)
{
    (void)state;
    /* Number formats. */
    assert_int_equal(sim_float_to_half(1.0f), 0x3c00);
    assert_int_equal(sim_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(sim_float_to_half(65519.0f), 0x7bff);
    assert_int_equal(sim_float_to_half(65520.0f), 0x7c00);
    assert_int_equal(sim_float_to_half(ldexpf(1.0f, -24)), 0x0001);
    assert_int_equal(sim_float_to_half(ldexpf(1.0f, -25)), 0x0000); /* tie to even */
    assert_int_equal(sim_float_to_half(1.0f + ldexpf(1.0f, -11)), 0x3c00); /* tie to even */
    assert_int_equal(sim_float_to_half(1.0f + 3 * ldexpf(1.0f, -11)), 0x3c02);
    assert_true(sim_half_to_float(0x0001) == ldexpf(1.0f, -24));
    assert_true(sim_half_to_float(0xc000) == -2.0f);
    assert_int_equal(sim_float_to_bf16(1.0f + ldexpf(1.0f, -8)), 0x3f80); /* tie to even */
    assert_int_equal(sim_float_to_bf16(1.0f + 3 * ldexpf(1.0f, -8)), 0x3f82);
    assert_true(sim_round_tf32(1.0f + ldexpf(1.0f, -11)) == 1.0f + ldexpf(1.0f, -10)); /* tie away */
    assert_true(sim_round_tf32(1.0f + ldexpf(1.0f, -12)) == 1.0f);

    configure("[gpu]\npreset = A100-40GB\n[gpu]\npreset = T4\n[gpu]\npreset = K80\n");
    cublasHandle_t h;
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.allocated_bytes, 4 * MiB); /* Ampere: 4 MiB */
    float a = 1.0f + ldexpf(1.0f, -20);
    assert_true(product(h, a, 1.0f, CUBLAS_COMPUTE_32F, 0) == a);
    assert_true(product(h, a, 1.0f, CUBLAS_COMPUTE_32F_FAST_TF32, 0) == 1.0f);
    assert_true(product(h, a, 1.0f, CUBLAS_COMPUTE_32F_FAST_16BF, 0) == 1.0f);
    setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
    assert_true(product(h, a, 1.0f, CUBLAS_COMPUTE_32F_FAST_TF32, 0) == a);
    unsetenv("NVIDIA_TF32_OVERRIDE");
    assert_int_equal(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
    assert_true(product(h, a, 1.0f, CUBLAS_COMPUTE_32F, 0) == 1.0f);
    assert_int_equal(cublasSetMathMode(h, (cublasMath_t)77), CUBLAS_STATUS_INVALID_VALUE);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    /* Turing has no TF32: the hint computes in fp32. */
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    assert_true(product(h, a, 1.0f, CUBLAS_COMPUTE_32F_FAST_TF32, 0) == a);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    /* Kepler: cublasGemmEx needs compute capability 5.0. */
    assert_int_equal(cudaSetDevice(2), cudaSuccess);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    float one = 1, zero = 0;
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, NULL, CUDA_R_32F, 1,
                                  NULL, CUDA_R_32F, 1, &zero, NULL, CUDA_R_32F, 1,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);

    /* fp64 computes in fp64. */
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    {
        double x[2] = {1.0 + ldexp(1.0, -40), 3.0}, y = 0, done = 1, dzero = 0;
        void *dx, *dy;
        assert_int_equal(cudaMalloc(&dx, sizeof x), cudaSuccess);
        assert_int_equal(cudaMalloc(&dy, sizeof y), cudaSuccess);
        assert_int_equal(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice), cudaSuccess);
        assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &done, dx, CUDA_R_64F, 1,
                                      (char *)dx + 8, CUDA_R_64F, 1, &dzero, dy, CUDA_R_64F, 1,
                                      CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(cudaMemcpy(&y, dy, sizeof y, cudaMemcpyDeviceToHost), cudaSuccess);
        assert_true(y == 3.0 + 3 * ldexp(1.0, -40));
        cudaFree(dx);
        cudaFree(dy);
    }
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);

    /* The negative controls compute something else. */
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    assert_true(product(h, 2.0f, 3.0f, CUBLAS_COMPUTE_32F, 1) == 12.0f);
    assert_int_equal(simcuda_set("gemm_bug = drop_last_k"), 0);
    assert_true(product(h, 2.0f, 3.0f, CUBLAS_COMPUTE_32F, 1) == 6.0f);
    assert_int_equal(simcuda_set("gemm_bug = none"), 0);
    gemm_case sq = {CUBLAS_OP_N, CUBLAS_OP_N, 3, 2, 2, 3, 2, 3};
    check_gemm(h, &sq, 1.0f, 0.0f);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

/* beta == 0 never reads C; a NaN there is overwritten. */
static void gemm_beta_zero_ignores_c(void **state)
{
    (void)state;
    configure("[gpu]\n");
    cublasHandle_t h;
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
    void *dA, *dB, *dC;
    assert_int_equal(cudaMalloc(&dA, 16), cudaSuccess);
    assert_int_equal(cudaMalloc(&dB, 16), cudaSuccess);
    assert_int_equal(cudaMalloc(&dC, 16), cudaSuccess);
    assert_int_equal(cudaMemcpy(dA, a, 16, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(dB, b, 16, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemset(dC, 0xff, 16), cudaSuccess);
    float one = 1, zero = 0;
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dA, CUDA_R_32F, 2, dB,
                                  CUDA_R_32F, 2, &zero, dC, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaMemcpy(c, dC, 16, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(a, c, 16);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cublasDestroy(h);
}

/* An operand outside its allocation faults asynchronously, and the fault
 * is sticky: every later call in the context returns it. */
static void sticky_fault(void **state)
{
    (void)state;
    configure("[gpu]\n[gpu]\n");
    cublasHandle_t h;
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    void *d;
    assert_int_equal(cudaMalloc(&d, 16), cudaSuccess);
    float one = 1, zero = 0;
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d,
                                  CUDA_R_32F, 4, &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS); /* launched */
    void *e = NULL;
    assert_int_equal(cudaMalloc(&e, 16), cudaErrorIllegalAddress);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    assert_int_equal(cudaGetLastError(), cudaErrorIllegalAddress);
    assert_int_equal(cudaGetLastError(), cudaErrorIllegalAddress); /* not cleared */
    size_t f, t;
    assert_int_equal(cuMemGetInfo(&f, &t), CUDA_ERROR_ILLEGAL_ADDRESS);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.faulted, cudaErrorIllegalAddress);
    /* Another device is unaffected. */
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaMalloc(&e, 16), cudaSuccess);
    assert_int_equal(cudaFree(e), cudaSuccess);
    /* A device reset recovers the faulted one. */
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaDeviceReset(), cudaSuccess);
    assert_int_equal(cudaMalloc(&e, 16), cudaSuccess);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    /* Injected: the second gemm faults when it runs. */
    assert_int_equal(simcuda_fault_async("cublasGemmEx", 2), 0);
    assert_int_equal(simcuda_fault_async("cudaFree", 1), -1);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, e, CUDA_R_32F, 2, e,
                                  CUDA_R_32F, 2, &zero, e, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, e, CUDA_R_32F, 2, e,
                                  CUDA_R_32F, 2, &zero, e, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    assert_int_equal(simcuda_faults_fired(), 1);
    cublasDestroy(h);
    simcuda_clear_faults();
}

/* ---- failure injection and the call log ---- */

static void injection_and_log(void **state)
{
    (void)state;
    configure("fail = cuInit:1=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH\n[gpu]\n");
    assert_int_equal(cuInit(0), CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    simcuda_log_clear();
    assert_int_equal(simcuda_fail("cudaMalloc", 2, 0, SIMCUDA_ONCE), 0);
    assert_int_equal(simcuda_fail("cudaEventCreate", 1, cudaErrorLaunchFailure, SIMCUDA_FROM), 0);
    void *p[3] = {0};
    assert_int_equal(cudaMalloc(&p[0], 8), cudaSuccess);
    assert_int_equal(cudaMalloc(&p[1], 8), cudaErrorMemoryAllocation);
    assert_null(p[1]); /* an injected failure writes nothing */
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
    assert_int_equal(cudaMalloc(&p[2], 8), cudaSuccess);
    cudaEvent_t ev;
    for (int i = 0; i < 3; i++)
        assert_int_equal(cudaEventCreate(&ev), cudaErrorLaunchFailure);
    /* A sticky code poisons the context it was injected in. */
    assert_int_equal(cudaMalloc(&p[1], 8), cudaErrorLaunchFailure);
    assert_int_equal(simcuda_faults_fired(), 5);
    simcuda_clear_faults();

    /* The log: function, thread, context at entry and at return, result. */
    size_t n = simcuda_log_size();
    assert_true(n >= 8);
    simcuda_call e;
    assert_int_equal(simcuda_log_entry(0, &e), 0);
    assert_string_equal(e.func, "cudaMalloc");
    assert_int_equal(e.gpu, SIMCUDA_NONE);   /* no context at entry ... */
    assert_int_equal(e.gpu_after, 0);        /* ... the runtime made one */
    assert_int_equal(e.result, cudaSuccess);
    assert_int_equal(simcuda_log_entry(1, &e), 0);
    assert_int_equal(e.injected, 1);
    assert_int_equal(e.result, cudaErrorMemoryAllocation);
    assert_int_equal(simcuda_log_count("cudaMalloc", SIMCUDA_ANY), 4);
    assert_int_equal(simcuda_log_count("cudaEventCreate", 0), 3);
    assert_int_equal(simcuda_log_count("cudaEventCreate", 1), 0);
    assert_int_equal(simcuda_log_entry(n, &e), -1);
}

/* A late failure: the call runs and writes its outputs, then fails; the
 * failure is the thread's last error but poisons nothing. */
static void late_failure(void **state)
{
    (void)state;
    configure("fail_late = cuDriverGetVersion:1\n"
              "fail_late = nvmlDeviceGetCount_v2:1=NVML_ERROR_GPU_IS_LOST\n"
              "[gpu]\n[gpu]\n");
    int v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_ERROR_UNKNOWN);
    assert_int_equal(v, 13000);
    v = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(v, 13000);
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    unsigned n = 0;
    assert_int_equal(nvmlDeviceGetCount_v2(&n), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(n, 2);
    assert_int_equal(nvmlShutdown(), NVML_SUCCESS);

    assert_int_equal(simcuda_fail("cudaGetDeviceCount", 1, cudaErrorLaunchFailure,
                                  SIMCUDA_LATE),
                     0);
    int count = 0;
    assert_int_equal(cudaGetDeviceCount(&count), cudaErrorLaunchFailure);
    assert_int_equal(count, 2);
    assert_int_equal(cudaGetLastError(), cudaErrorLaunchFailure);
    void *p = NULL; /* a sticky code given late poisons nothing */
    assert_int_equal(cudaMalloc(&p, 8), cudaSuccess);
    assert_int_equal(cudaFree(p), cudaSuccess);
    assert_int_equal(simcuda_faults_fired(), 3);
    simcuda_call e;
    assert_int_equal(simcuda_log_entry(0, &e), 0);
    assert_string_equal(e.func, "cuDriverGetVersion");
    assert_int_equal(e.injected, 1);
    assert_int_equal(e.result, CUDA_ERROR_UNKNOWN);
    simcuda_clear_faults();
}

static void *other_thread(void *arg)
{
    (void)arg;
    CUcontext c = (CUcontext)(uintptr_t)1;
    if (cuCtxGetCurrent(&c) != CUDA_SUCCESS || c != NULL)
        return (void *)1; /* the main thread's context is not ours */
    int dev = -1;
    void *p = NULL;
    if (cudaSetDevice(1) != cudaSuccess || cudaMalloc(&p, 64) != cudaSuccess ||
        cudaGetDevice(&dev) != cudaSuccess || dev != 1 || cudaFree(p) != cudaSuccess)
        return (void *)2;
    return NULL;
}

static void threads_have_own_stacks(void **state)
{
    (void)state;
    configure("[gpu]\n[gpu]\n");
    CUcontext c;
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
    assert_int_equal(cuCtxPushCurrent(c), CUDA_SUCCESS);
    pthread_t t;
    void *ret = (void *)9;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_null(ret);
    int dev = -1;
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 0);
    simcuda_call e;
    size_t n = simcuda_log_size();
    int threads = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(simcuda_log_entry(i, &e), 0);
        if (e.thread > threads)
            threads = e.thread;
    }
    assert_true(threads >= 2);
    assert_int_equal(cuCtxPopCurrent(NULL), CUDA_SUCCESS);
}

/* ---- NVML ---- */

static void nvml_view(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "", 1); /* NVML ignores it */
    fleet3();
    unsigned n = 0;
    assert_int_equal(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    assert_int_equal(simcuda_nvml_refs(), 2);
    assert_int_equal(nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    assert_int_equal(n, 3);
    nvmlDevice_t d, e;
    char buf[96];
    /* NVML numbers by PCI bus id: 0000:21 (A100), 0000:41 (T4), 0000:c1 (H200). */
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetUUID(d, buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, uuid1);
    assert_int_equal(nvmlDeviceGetUUID(d, buf, 10), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(3, &d), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nvmlDeviceGetHandleByUUID(uuid0, &d), NVML_SUCCESS);
    unsigned idx = 9;
    assert_int_equal(nvmlDeviceGetIndex(d, &idx), NVML_SUCCESS);
    assert_int_equal(idx, 2);
    assert_int_equal(nvmlDeviceGetHandleByPciBusId_v2("00000000:C1:00.0", &e), NVML_SUCCESS);
    assert_ptr_equal(d, e);
    assert_int_equal(nvmlDeviceGetHandleByPciBusId_v2("0000:99:00.0", &e), NVML_ERROR_NOT_FOUND);
    assert_int_equal(nvmlDeviceGetName(d, buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "NVIDIA H200");
    nvmlMemory_t m;
    assert_int_equal(nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
    assert_int_equal(m.free, UINT64_C(100) << 30);
    assert_int_equal(m.used, m.total - m.free);
    nvmlMemory_v2_t m2;
    m2.version = 1;
    assert_int_equal(nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m2.version = nvmlMemory_v2;
    assert_int_equal(nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_SUCCESS);
    assert_int_equal(m2.free, m.free);
    assert_int_equal(m2.used + m2.reserved + m2.free, m2.total);
    int v = 0;
    assert_int_equal(nvmlSystemGetCudaDriverVersion_v2(&v), NVML_SUCCESS);
    assert_int_equal(v, 13000);
    assert_int_equal(nvmlSystemGetDriverVersion(buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "580.65.06");
    /* NVML sees what CUDA does in this process. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    fleet3();
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetHandleByUUID(uuid0, &d), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
    unsigned long long used0 = m.used;
    void *p;
    assert_int_equal(cudaMalloc(&p, 1000), cudaSuccess); /* ordinal 0 is the H200 */
    assert_int_equal(nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
    assert_int_equal(m.used - used0, 300 * MiB + 2 * MiB);
    simcuda_unit_state st;
    int h200 = simcuda_unit_of_ordinal(0);
    assert_int_equal(simcuda_unit(h200, &st), 0);
    assert_int_equal(st.bytes_allocated, 2 * MiB);
    assert_int_equal(st.contexts_created, 1);
    assert_int_equal(cudaFree(p), cudaSuccess);
    assert_int_equal(simcuda_unit(h200, &st), 0);
    assert_int_equal(st.bytes_allocated, 2 * MiB); /* a sum: freeing takes nothing off */
    assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
    assert_int_equal(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    /* MIG handles. */
    char text[256];
    snprintf(text, sizeof text, "[gpu]\npreset = A100-40GB\n[mig]\nuuid = %s\n[mig]\n", mig0);
    configure(text);
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    assert_int_equal(n, 1);
    unsigned cur = 9, pend = 9, is_mig = 9;
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_DEVICE_MIG_ENABLE);
    assert_int_equal(nvmlDeviceGetMigDeviceHandleByIndex(d, 1, &e), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMigDeviceHandleByIndex(d, 2, &e), NVML_ERROR_NOT_FOUND);
    assert_int_equal(nvmlDeviceGetHandleByUUID(mig0, &e), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceIsMigDeviceHandle(e, &is_mig), NVML_SUCCESS);
    assert_int_equal(is_mig, 1);
    nvmlDevice_t parent;
    assert_int_equal(nvmlDeviceGetDeviceHandleFromMigDeviceHandle(e, &parent), NVML_SUCCESS);
    assert_ptr_equal(parent, d);
    configure("nvml_init_error = NVML_ERROR_DRIVER_NOT_LOADED\n[gpu]\n");
    assert_int_equal(nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_string_equal(nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
}

/* Health, placement and processes; the MIG handles' restrictions; a GPU
 * that refuses its own queries. */
static void nvml_health(void **state)
{
    (void)state;
    configure("[gpu]\npreset = H100\nutilization = 35\nmemory_utilization = 12\ntemperature = 58\n"
              "power = 301.25W\npcie = 3x8\nprocess = 4242:20GiB\nprocess = 77:1GiB\n"
              "[gpu]\npreset = T4\n");
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d, t4;
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(1, &t4), NVML_SUCCESS);
    nvmlUtilization_t u = {9, 9};
    assert_int_equal(nvmlDeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 35);
    assert_int_equal(u.memory, 12);
    unsigned v = 0;
    assert_int_equal(nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(v, 58);
    assert_int_equal(nvmlDeviceGetTemperature(d, 7, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nvmlDeviceGetPowerUsage(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 301250);
    assert_int_equal(nvmlDeviceGetEnforcedPowerLimit(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 700000); /* the preset's */
    assert_int_equal(nvmlDeviceGetEnforcedPowerLimit(t4, &v), NVML_SUCCESS);
    assert_int_equal(v, 70000);
    assert_int_equal(nvmlDeviceGetPowerUsage(t4, &v), NVML_SUCCESS);
    assert_int_equal(v, 7000); /* idle: a tenth of the limit */
    assert_int_equal(nvmlDeviceGetCurrPcieLinkGeneration(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 3);
    assert_int_equal(nvmlDeviceGetCurrPcieLinkWidth(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 8);
    assert_int_equal(nvmlDeviceGetMaxPcieLinkGeneration(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 5);
    assert_int_equal(nvmlDeviceGetMaxPcieLinkWidth(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 16);
    assert_int_equal(nvmlDeviceGetCurrPcieLinkGeneration(t4, &v), NVML_SUCCESS);
    assert_int_equal(v, 3); /* at its best, the preset's */
    /* The processes: the count protocol, then the list. */
    unsigned count = 0;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(d, &count, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(count, 2);
    nvmlProcessInfo_t p[4];
    count = 1;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(d, &count, p), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(count, 2);
    count = 1;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(d, &count, NULL), NVML_ERROR_INVALID_ARGUMENT);
    count = 4;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(d, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 2);
    assert_int_equal(p[0].pid, 4242);
    assert_int_equal(p[0].usedGpuMemory, UINT64_C(20) << 30);
    assert_int_equal(p[1].pid, 77);
    count = 0;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(t4, &count, NULL), NVML_SUCCESS);
    assert_int_equal(count, 0);
    /* Their memory is used; this process joins the list with a context. */
    nvmlMemory_t m;
    assert_int_equal(nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
    assert_int_equal(m.used, UINT64_C(21) << 30);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    CUcontext c;
    assert_int_equal(cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
    count = 4;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(d, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 3);
    assert_int_equal(p[2].pid, (unsigned)getpid());
    assert_int_equal(p[2].usedGpuMemory, 500 * MiB);
    assert_int_equal(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS); /* a second one */
    assert_int_equal(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.contexts_created, 2);
    assert_int_equal(st.bytes_allocated, 0);

    /* MIG: an instance answers memory and processes, not the physical
     * figures; utilisation is not supported in MIG mode; a GPU with
     * nvml_access = denied refuses its own queries, not its instances'. */
    configure("[gpu]\npreset = A100-80GB\nnvml_access = denied\n[mig]\ntotal = 10GiB\nprocess = 9:1GiB\n"
              "[mig]\ntotal = 20GiB\n[gpu]\npreset = A100-40GB\n");
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t gpu, mig, other;
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &gpu), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(1, &other), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMigDeviceHandleByIndex(gpu, 0, &mig), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMaxMigDeviceCount(gpu, &v), NVML_SUCCESS);
    assert_int_equal(v, 7);
    assert_int_equal(nvmlDeviceGetMaxMigDeviceCount(other, &v), NVML_SUCCESS);
    assert_int_equal(v, 0);
    assert_int_equal(nvmlDeviceGetMaxMigDeviceCount(mig, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nvmlDeviceGetMemoryInfo(mig, &m), NVML_SUCCESS);
    assert_int_equal(m.total, UINT64_C(10) << 30);
    assert_int_equal(m.used, UINT64_C(1) << 30);
    count = 0;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(mig, &count, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(count, 1);
    assert_int_equal(nvmlDeviceGetTemperature(mig, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nvmlDeviceGetUtilizationRates(mig, &u), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nvmlDeviceGetMemoryInfo(gpu, &m), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(nvmlDeviceGetTemperature(gpu, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_NO_PERMISSION);
    count = 0;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(gpu, &count, NULL), NVML_ERROR_NO_PERMISSION);
    assert_string_equal(nvmlErrorString(NVML_ERROR_NO_PERMISSION), "Insufficient Permissions");
    configure("[gpu]\npreset = A100-80GB\n[mig]\nprocess = 9:1GiB\n[mig]\nprocess = 10:2GiB\n");
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &gpu), NVML_SUCCESS);
    count = 0; /* the GPU answers for its instances */
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(gpu, &count, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(count, 2);
    assert_int_equal(nvmlDeviceGetUtilizationRates(gpu, &u), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nvmlDeviceGetTemperature(gpu, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
}

/* The process lists (compute, graphics, both; memory NVML cannot give),
 * a MIG instance's profile, ids and attributes, a GPU's PCI information
 * and compute capability. */
static void nvml_processes_and_mig(void **state)
{
    (void)state;
    configure("[gpu]\npreset = H100\npci = 0000:1b:00.0\nprocess = 10:1GiB\n"
              "process = 11:2GiB:graphics\nprocess = 12:3GiB:both\nprocess = 13:n/a\n"
              "[gpu]\npreset = H200\npci = 0000:2c:00.0\n"
              "[mig]\nname = NVIDIA H200 MIG 1g.18gb\ntotal = 16GiB\nprocess = 20:3GiB\n"
              "[mig]\nprofile = 3g.71gb\ngi = 2\nci = 1\ntotal = 66GiB\n"
              "[mig]\ntotal = 16GiB\n");
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d, h200, m0, m1, m2;
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(1, &h200), NVML_SUCCESS);
    nvmlProcessInfo_t p[8];
    unsigned count = 8;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(d, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 3); /* 10, 12 (both), 13 */
    assert_int_equal(p[0].pid, 10);
    assert_int_equal(p[1].pid, 12);
    assert_int_equal(p[2].pid, 13);
    assert_true(p[2].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL);
    assert_int_equal(p[0].gpuInstanceId, 0xFFFFFFFFu); /* not in MIG mode */
    assert_int_equal(p[0].computeInstanceId, 0xFFFFFFFFu);
    count = 0;
    assert_int_equal(nvmlDeviceGetGraphicsRunningProcesses_v3(d, &count, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(count, 2);
    count = 8;
    assert_int_equal(nvmlDeviceGetGraphicsRunningProcesses_v2(d, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 2);
    assert_int_equal(p[0].pid, 11);
    assert_int_equal(p[0].usedGpuMemory, UINT64_C(2) << 30);
    assert_int_equal(p[1].pid, 12);
    nvmlProcessInfo_v1_t v1[8];
    count = 1;
    assert_int_equal(nvmlDeviceGetGraphicsRunningProcesses(d, &count, v1), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(count, 2);
    assert_int_equal(v1[0].pid, 11);
    /* Memory not available is not counted as used: 1 + 2 + 3 GiB. */
    nvmlMemory_t m;
    assert_int_equal(nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
    assert_int_equal(m.used, UINT64_C(6) << 30);
    nvmlPciInfo_t pci;
    assert_int_equal(nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:1B:00.0");
    assert_string_equal(pci.busIdLegacy, "0000:1B:00.0");
    assert_int_equal(pci.bus, 0x1b);
    int major = 0, minor = 7;
    assert_int_equal(nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
    assert_int_equal(major, 9);
    assert_int_equal(minor, 0);
    unsigned id = 7;
    assert_int_equal(nvmlDeviceGetGpuInstanceId(d, &id), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nvmlDeviceGetComputeInstanceId(d, &id), NVML_ERROR_NOT_SUPPORTED);
    nvmlDeviceAttributes_t at;
    assert_int_equal(nvmlDeviceGetAttributes_v2(d, &at), NVML_ERROR_NOT_SUPPORTED);

    /* MIG: the profile from the name, given, or made up; the ids given or
     * by place; the instance's processes carry them. */
    assert_int_equal(nvmlDeviceGetMigDeviceHandleByIndex(h200, 0, &m0), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMigDeviceHandleByIndex(h200, 1, &m1), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetMigDeviceHandleByIndex(h200, 2, &m2), NVML_SUCCESS);
    char name[96];
    assert_int_equal(nvmlDeviceGetName(m1, name, sizeof name), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H200 MIG 3g.71gb");
    assert_int_equal(nvmlDeviceGetName(m2, name, sizeof name), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H200 MIG 1g.17gb");
    assert_int_equal(nvmlDeviceGetGpuInstanceId(m0, &id), NVML_SUCCESS);
    assert_int_equal(id, 1);
    assert_int_equal(nvmlDeviceGetGpuInstanceId(m1, &id), NVML_SUCCESS);
    assert_int_equal(id, 2);
    assert_int_equal(nvmlDeviceGetComputeInstanceId(m1, &id), NVML_SUCCESS);
    assert_int_equal(id, 1);
    assert_int_equal(nvmlDeviceGetGpuInstanceId(m2, &id), NVML_SUCCESS);
    assert_int_equal(id, 3);
    assert_int_equal(nvmlDeviceGetAttributes_v2(m1, &at), NVML_SUCCESS);
    assert_int_equal(at.gpuInstanceSliceCount, 3);
    assert_int_equal(at.memorySizeMB, 66 * 1024);
    assert_int_equal(nvmlDeviceGetAttributes_v2(m0, &at), NVML_SUCCESS);
    assert_int_equal(at.gpuInstanceSliceCount, 1);
    assert_int_equal(nvmlDeviceGetPciInfo_v3(m0, &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:2C:00.0"); /* its GPU's */
    count = 8;
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(m0, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 1);
    assert_int_equal(p[0].pid, 20);
    assert_int_equal(p[0].gpuInstanceId, 1);
    assert_int_equal(p[0].computeInstanceId, 0);
    count = 8; /* the GPU lists its instances' */
    assert_int_equal(nvmlDeviceGetComputeRunningProcesses_v3(h200, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 1);
    assert_int_equal(p[0].usedGpuMemory, UINT64_C(3) << 30);
    count = 8;
    assert_int_equal(nvmlDeviceGetGraphicsRunningProcesses_v3(m0, &count, p), NVML_SUCCESS);
    assert_int_equal(count, 0);
}

/* The runtime refuses a driver older than its major. */
/* ---- the bandwidth time model, cublasSdot, the link under load ---- */

/* Elapsed ms of one call of f between two events on s (deferred: work
 * runs at the synchronisation). */
static float timed_copy(cudaStream_t s, cudaEvent_t a, cudaEvent_t b, void *dst, const void *src,
                        size_t n, enum cudaMemcpyKind kind)
{
    float ms = -1;
    assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(dst, src, n, kind, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    return ms;
}

static void bandwidth_model(void **state)
{
    (void)state;
    configure("mode = deferred\n[gpu]\ncopy_gbps = 10\nmemory_gbps = 100\npageable_gbps = 4\n"
              "pcie = 4x16\npcie_max = 5x16\npcie_idle = 1x8\nl2 = 8MiB\nbus_bits = 4096\n"
              "memory_clock_mhz = 1000\n[gpu]\npreset = H200\n");
    int l2 = 0;
    assert_int_equal(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
    assert_int_equal(l2, 8 << 20);
    assert_int_equal(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 1), cudaSuccess);
    assert_int_equal(l2, 50 << 20); /* the preset's */
    cudaStream_t s;
    cudaEvent_t a, b;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    const size_t n = 1000000;
    void *x = NULL, *y = NULL, *pinned = NULL, *pageable = malloc(n);
    assert_non_null(pageable);
    assert_int_equal(cudaMalloc(&x, n), cudaSuccess);
    assert_int_equal(cudaMalloc(&y, n), cudaSuccess);
    assert_int_equal(cudaMallocHost(&pinned, n), cudaSuccess);
    memset(pageable, 0, n);
    /* 2 us each; device to device n read and n written at 100 GB/s; the
     * link at 4x16 of 5x16 runs at half its rate: pinned 10 GB/s x 0.5,
     * pageable 4 GB/s x 0.5. */
    assert_true(fabs(timed_copy(s, a, b, y, x, n, cudaMemcpyDeviceToDevice) - 0.022) < 1e-4);
    assert_true(fabs(timed_copy(s, a, b, x, pinned, n, cudaMemcpyHostToDevice) - 0.202) < 1e-3);
    assert_true(fabs(timed_copy(s, a, b, pinned, x, n, cudaMemcpyDeviceToHost) - 0.202) < 1e-3);
    assert_true(fabs(timed_copy(s, a, b, x, pageable, n, cudaMemcpyHostToDevice) - 0.502) < 1e-3);
    assert_true(fabs(timed_copy(s, a, b, pageable, x, n, cudaMemcpyDeviceToHost) - 0.502) < 1e-3);
    /* NVML: the link is at pcie while work is queued, at pcie_idle after. */
    assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d;
    unsigned v = 0;
    assert_int_equal(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    assert_int_equal(nvmlDeviceGetCurrPcieLinkGeneration(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 1);
    assert_int_equal(cudaMemcpyAsync(x, pinned, n, cudaMemcpyHostToDevice, s), cudaSuccess);
    assert_int_equal(nvmlDeviceGetCurrPcieLinkGeneration(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 4);
    assert_int_equal(nvmlDeviceGetCurrPcieLinkWidth(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 16);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(nvmlDeviceGetCurrPcieLinkWidth(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 8);
    assert_int_equal(nvmlDeviceGetMemoryBusWidth(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 4096);
    assert_int_equal(nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
    assert_int_equal(v, 1000);
    assert_int_equal(nvmlDeviceGetMaxClockInfo(d, (nvmlClockType_t)9, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
    assert_int_equal(cudaFree(x), cudaSuccess);
    assert_int_equal(cudaFree(y), cudaSuccess);
    assert_int_equal(cudaFreeHost(pinned), cudaSuccess);
    free(pageable);
    assert_int_equal(cudaEventDestroy(a), cudaSuccess);
    assert_int_equal(cudaEventDestroy(b), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void sdot(void **state)
{
    (void)state;
    configure("mode = deferred\n[gpu]\nmemory_gbps = 100\n");
    cublasHandle_t h;
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    cublasPointerMode_t mode = CUBLAS_POINTER_MODE_DEVICE;
    assert_int_equal(cublasGetPointerMode(h, &mode), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(mode, CUBLAS_POINTER_MODE_HOST); /* the default */
    assert_int_equal(cublasSetPointerMode(h, (cublasPointerMode_t)7), CUBLAS_STATUS_INVALID_VALUE);
    const float hx[3] = {1, 2, 3}, hy[3] = {1, 10, 100};
    float *x = NULL, *y = NULL, *r = NULL, got = 0;
    assert_int_equal(cudaMalloc((void **)&x, sizeof hx), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&y, sizeof hy), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&r, sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice), cudaSuccess);
    /* Host pointer mode: the call returns with the result, even deferred. */
    assert_int_equal(cublasSdot(h, 3, x, 1, y, 1, &got), CUBLAS_STATUS_SUCCESS);
    assert_true(got == 321.0f);
    assert_int_equal(cublasSdot(h, 3, x, -1, y, 1, &got), CUBLAS_STATUS_SUCCESS);
    assert_true(got == 123.0f); /* x walked from its end */
    assert_int_equal(cublasSdot(h, 0, x, 1, y, 1, &got), CUBLAS_STATUS_SUCCESS);
    assert_true(got == 0.0f);
    assert_int_equal(cublasSdot(h, 3, x, 1, y, 1, NULL), CUBLAS_STATUS_INVALID_VALUE);
    /* Device pointer mode: queued, the result in device memory. */
    assert_int_equal(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasSdot(h, 2, x + 1, 1, y + 1, 1, r), CUBLAS_STATUS_SUCCESS);
    simcuda_unit_state st;
    assert_int_equal(simcuda_unit(0, &st), 0);
    assert_int_equal(st.pending_ops, 1);
    got = 0;
    assert_int_equal(cudaMemcpy(&got, r, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_true(got == 320.0f);
    /* Modelled time: the launch, then both vectors at the memory's rate. */
    cudaEvent_t a, b;
    float ms = 0;
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventRecord(a, NULL), cudaSuccess);
    assert_int_equal(cublasSdot(h, 3, x, 1, y, 1, r), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaEventRecord(b, NULL), cudaSuccess);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_true(fabs(ms - (0.005 + 24.0 / 100e9 * 1e3)) < 1e-5);
    /* An operand beyond its allocation faults when the work runs. */
    assert_int_equal(cublasSdot(h, 4, x, 1, y, 1, r), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    assert_int_equal(cublasSdot(h, 3, x, 1, y, 1, r), CUBLAS_STATUS_EXECUTION_FAILED);
    assert_int_equal(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasSdot(h, 3, x, 1, y, 1, r), CUBLAS_STATUS_NOT_INITIALIZED);
    /* An injected asynchronous fault, on a fresh configuration. */
    configure("fault_async = cublasSdot_v2:2\n[gpu]\n");
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cudaMalloc((void **)&x, 64), cudaSuccess);
    assert_int_equal(cublasSdot(h, 4, x, 1, x, 1, &got), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasSdot(h, 4, x, 1, x, 1, &got), CUBLAS_STATUS_EXECUTION_FAILED);
    assert_int_equal(simcuda_faults_fired(), 1);
}

static void runtime_needs_new_enough_driver(void **state)
{
    (void)state;
    configure("driver_version = 12.8\n[gpu]\n");
    int n = 7, v = 0;
    assert_int_equal(cudaGetDeviceCount(&n), cudaErrorInsufficientDriver);
    assert_int_equal(n, 0);
    assert_int_equal(cudaDriverGetVersion(&v), cudaSuccess);
    assert_int_equal(v, 12080);
    assert_int_equal(cudaRuntimeGetVersion(&v), cudaSuccess);
    assert_int_equal(v, 13000);
    cublasHandle_t h;
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_NOT_INITIALIZED);
    configure("[gpu]\n");
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(config_errors, setup),
        cmocka_unit_test_setup(driver_basics, setup),
        cmocka_unit_test_setup(visible_devices, setup),
        cmocka_unit_test_setup(primary_contexts, setup),
        cmocka_unit_test_setup(runtime_contexts, setup),
        cmocka_unit_test_setup(runtime_memory, setup),
        cmocka_unit_test_setup(runtime_pages_and_reserve, setup),
        cmocka_unit_test_setup(device_pointer_faults_on_host, setup),
        cmocka_unit_test_setup(events_and_deferred, setup),
        cmocka_unit_test_setup(gemm_column_major, setup),
        cmocka_unit_test_setup(gemm_precisions, setup),
        cmocka_unit_test_setup(gemm_beta_zero_ignores_c, setup),
        cmocka_unit_test_setup(sticky_fault, setup),
        cmocka_unit_test_setup(injection_and_log, setup),
        cmocka_unit_test_setup(late_failure, setup),
        cmocka_unit_test_setup(threads_have_own_stacks, setup),
        cmocka_unit_test_setup(nvml_view, setup),
        cmocka_unit_test_setup(nvml_health, setup),
        cmocka_unit_test_setup(nvml_processes_and_mig, setup),
        cmocka_unit_test_setup(runtime_needs_new_enough_driver, setup),
        cmocka_unit_test_setup(bandwidth_model, setup),
        cmocka_unit_test_setup(sdot, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
