/*
 * test_cuda_device.c - lib/cuda_device.c on its own, against a scripted
 * CUDA driver: the description of a device (attributes, name, UUID, PCI bus
 * id and its fallback), the messages of a failed driver call, the primary
 * context's entry (retained once per device, its cost measured through
 * NVML only when both readings succeed and the second is higher) and the
 * memory read inside it.
 *
 * The scripted functions write their outputs whether they succeed or not
 * (CUDA documents them only for CUDA_SUCCESS), and may write strings that
 * fill the buffer without a NUL: what the library reads of either shows.
 * The whole-stack view of the same code is the simulated NVIDIA stack's
 * (scenario.*); this test reaches the answers a simulation of correct
 * drivers never gives.
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

#include "internal.h"

#ifdef GPUPROBE_HAVE_CUDA
#include "cuda_loader.h"

#define FAIL_CU CUDA_ERROR_UNKNOWN

static struct script {
    CUresult get_rc;
    CUresult name_rc;
    const char *name;     /* NULL: fill the buffer with 'N', no NUL */
    int name_len_seen;
    CUresult uuid_rc;
    CUresult total_rc;
    size_t total;
    CUresult attr_rc[256];
    int attr[256];
    cudaError_t pci_rc;
    const char *pci;      /* NULL: fill the buffer with 'P', no NUL */
    int last_error_calls;
    const char *error_name;
    CUresult state_rc;
    int active;
    CUresult retain_rc, push_rc, pop_rc, meminfo_rc;
    int retains, releases, pushes, pops;
    size_t mem_free, mem_total;
    /* NVML's used memory, one answer per call */
    int nvml_rc[4];
    unsigned long long nvml_used[4];
    int nvml_calls;
} sc;

static CUresult s_get(CUdevice *d, int i)
{
    *d = 100 + i;
    return sc.get_rc;
}
static CUresult s_name(char *name, int len, CUdevice d)
{
    (void)d;
    sc.name_len_seen = len;
    if (sc.name)
        snprintf(name, (size_t)len, "%s", sc.name);
    else
        memset(name, 'N', (size_t)len);
    return sc.name_rc;
}
static CUresult s_uuid(CUuuid *u, CUdevice d)
{
    (void)d;
    for (int i = 0; i < 16; i++)
        u->bytes[i] = (char)(0xa0 + i);
    return sc.uuid_rc;
}
static CUresult s_total(size_t *t, CUdevice d)
{
    (void)d;
    *t = sc.total;
    return sc.total_rc;
}
static CUresult s_attr(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = sc.attr[(unsigned)a & 255u];
    return sc.attr_rc[(unsigned)a & 255u];
}
static cudaError_t s_pci(char *pci, int len, int i)
{
    (void)i;
    if (sc.pci)
        snprintf(pci, (size_t)len, "%s", sc.pci);
    else
        memset(pci, 'P', (size_t)len);
    return sc.pci_rc;
}
static cudaError_t s_last_error(void)
{
    sc.last_error_calls++;
    return cudaSuccess;
}
static CUresult s_error_name(CUresult r, const char **s)
{
    (void)r;
    *s = sc.error_name;
    return CUDA_SUCCESS;
}
static CUresult s_state(CUdevice d, unsigned *flags, int *active)
{
    (void)d;
    *flags = 0;
    *active = sc.active;
    return sc.state_rc;
}
static char primary; /* the one primary context: its address */
static CUresult s_retain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)(void *)&primary;
    sc.retains++;
    return sc.retain_rc;
}
static CUresult s_release(CUdevice d)
{
    (void)d;
    sc.releases++;
    return CUDA_SUCCESS;
}
static CUresult s_push(CUcontext c)
{
    assert_ptr_equal(c, &primary);
    sc.pushes++;
    return sc.push_rc;
}
static CUresult s_pop(CUcontext *c)
{
    *c = (CUcontext)(void *)&primary;
    sc.pops++;
    return sc.pop_rc;
}
static CUresult s_meminfo(size_t *f, size_t *t)
{
    *f = sc.mem_free;
    *t = sc.mem_total;
    return sc.meminfo_rc;
}
static int s_nvml_mem(void *h, gp_nvml_memory_v2 *m)
{
    (void)h;
    int k = sc.nvml_calls < 4 ? sc.nvml_calls : 3;
    sc.nvml_calls++;
    m->total = 1000;
    m->reserved = 0;
    m->used = sc.nvml_used[k];
    m->free = 1000 - m->used;
    return sc.nvml_rc[k];
}
static int s_nvml_shutdown(void) { return 0; }

static char lib_mark; /* stands for the libraries: never closed (initialised) */
static char nvml_handle;

/* A context whose CUDA is the script, with two devices: the CPU and
 * cuda:0, known to NVML. The script reset: every call succeeds. */
static gpuprobe_context *scripted(void)
{
    memset(&sc, 0, sizeof sc);
    sc.name = "Scripted GPU";
    sc.pci = "0000:19:00.0";
    sc.total = 80u << 20;
    sc.error_name = "CUDA_ERROR_SCRIPTED";
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gp_cuda *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->rt_lib = c->drv_lib = &lib_mark;
    c->rt_initialized = c->drv_initialized = 1;
    c->drv.DeviceGet = s_get;
    c->drv.DeviceGetName = s_name;
    c->drv.DeviceGetUuid = s_uuid;
    c->drv.DeviceTotalMem = s_total;
    c->drv.DeviceGetAttribute = s_attr;
    c->drv.DevicePrimaryCtxGetState = s_state;
    c->drv.GetErrorName = s_error_name;
    c->rt.DeviceGetPCIBusId = s_pci;
    c->rt.GetLastError = s_last_error;
    c->drvctx.PrimaryCtxRetain = s_retain;
    c->drvctx.PrimaryCtxRelease = s_release;
    c->drvctx.CtxPushCurrent = s_push;
    c->drvctx.CtxPopCurrent = s_pop;
    c->drvctx.MemGetInfo = s_meminfo;
    c->nvml.tried = c->nvml.ok = 1;
    c->nvml.f.DeviceGetMemoryInfo_v2 = s_nvml_mem;
    c->nvml.f.Shutdown = s_nvml_shutdown;
    ctx->cuda = c;
    ctx->cuda_cause = GPUPROBE_CUDA_AVAILABLE;
    ctx->devices = calloc(2, sizeof *ctx->devices);
    assert_non_null(ctx->devices);
    ctx->ndevices = 2;
    ctx->enumerated = 1;
    gp_device *d = &ctx->devices[1];
    d->kind = GPUPROBE_DEVICE_CUDA;
    d->cuda_index = 0;
    strcpy(d->spec, "cuda:0");
    strcpy(d->name, "Scripted GPU");
    d->nvml = &nvml_handle;
    d->context_bytes = 7; /* a figure the measurement may replace */
    return ctx;
}

/* ---- description ---------------------------------------------------------- */

static void describe_all_known(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    sc.attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 9;
    sc.attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = 0;
    sc.attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = 132;
    sc.attr[CU_DEVICE_ATTRIBUTE_CLOCK_RATE] = 1980000;
    sc.attr[CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE] = 2619000;
    sc.attr[CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH] = 6144;
    gp_device d;
    memset(&d, 0, sizeof d);
    assert_int_equal(gp_cuda_describe(ctx, &d, 2), GPUPROBE_OK);
    assert_int_equal(d.kind, GPUPROBE_DEVICE_CUDA);
    assert_int_equal(d.cuda_index, 2);
    assert_string_equal(d.spec, "cuda:2");
    assert_string_equal(d.name, "Scripted GPU");
    assert_int_equal(sc.name_len_seen, GP_NAME_LEN); /* the whole buffer */
    assert_string_equal(d.uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
    assert_int_equal(d.total_memory, 80u << 20);
    assert_int_equal(d.cc_major, 9);
    assert_int_equal(d.cc_minor, 0);
    assert_int_equal(d.multiprocessors, 132);
    assert_int_equal(d.clock_khz, 1980000);
    assert_int_equal(d.memory_clock_khz, 2619000);
    assert_int_equal(d.memory_bus_bits, 6144);
    assert_string_equal(d.pci_bus_id, "0000:19:00.0");
    assert_int_equal(sc.last_error_calls, 0);
    gpuprobe_context_destroy(ctx);
}

/* What the driver fails to give is unknown (0, ""), whatever the failed
 * call wrote; a negative attribute is unknown too. */
static void describe_failures_unknown(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    for (int a = 0; a < 256; a++) {
        sc.attr[a] = 77;
        sc.attr_rc[a] = FAIL_CU;
    }
    sc.attr_rc[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = CUDA_SUCCESS;
    sc.attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = -5;
    sc.name_rc = sc.uuid_rc = sc.total_rc = FAIL_CU;
    sc.pci_rc = cudaErrorUnknown; /* the bus id from the attributes, failing too */
    gp_device d;
    memset(&d, 0, sizeof d);
    assert_int_equal(gp_cuda_describe(ctx, &d, 1), GPUPROBE_OK);
    assert_string_equal(d.name, "CUDA device 1");
    assert_string_equal(d.uuid, "");
    assert_int_equal(d.total_memory, 0);
    assert_int_equal(d.cc_major, 0);
    assert_int_equal(d.cc_minor, 0);
    assert_int_equal(d.multiprocessors, 0);
    assert_int_equal(d.clock_khz, 0);
    assert_int_equal(d.memory_clock_khz, 0);
    assert_int_equal(d.memory_bus_bits, 0);
    assert_string_equal(d.pci_bus_id, "0000:00:00.0");
    assert_int_equal(sc.last_error_calls, 1); /* the runtime's error cleared */

    /* A name the driver gives as "" is no name either. */
    sc.name_rc = CUDA_SUCCESS;
    sc.name = "";
    assert_int_equal(gp_cuda_describe(ctx, &d, 1), GPUPROBE_OK);
    assert_string_equal(d.name, "CUDA device 1");
    gpuprobe_context_destroy(ctx);
}

/* Strings that fill the buffer without a NUL are cut at its end. */
static void describe_unterminated(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    sc.name = NULL;
    sc.pci = NULL;
    gp_device d;
    memset(&d, 0, sizeof d);
    assert_int_equal(gp_cuda_describe(ctx, &d, 0), GPUPROBE_OK);
    assert_int_equal(strlen(d.name), sizeof d.name - 1);
    assert_int_equal(d.name[0], 'N');
    assert_int_equal(strlen(d.pci_bus_id), sizeof d.pci_bus_id - 1);
    assert_int_equal(d.pci_bus_id[0], 'P');
    gpuprobe_context_destroy(ctx);
}

/* The bus id from the attributes when the runtime cannot give it: each
 * part cut to its field's width (domain 16 bits, bus and device 8). */
static void describe_pci_from_attributes(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    sc.pci_rc = cudaErrorInvalidDevice;
    sc.attr[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID] = 0x1;
    sc.attr[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = 0x19;
    sc.attr[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID] = 0x1f;
    gp_device d;
    memset(&d, 0, sizeof d);
    assert_int_equal(gp_cuda_describe(ctx, &d, 0), GPUPROBE_OK);
    assert_string_equal(d.pci_bus_id, "0001:19:1f.0");
    sc.attr[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID] = 0x1ffff;
    sc.attr[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = 0x1fe;
    sc.attr[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID] = 0x301;
    assert_int_equal(gp_cuda_describe(ctx, &d, 0), GPUPROBE_OK);
    assert_string_equal(d.pci_bus_id, "ffff:fe:01.0");
    /* An empty answer from the runtime is no answer. */
    sc.pci_rc = cudaSuccess;
    sc.pci = "";
    assert_int_equal(gp_cuda_describe(ctx, &d, 0), GPUPROBE_OK);
    assert_string_equal(d.pci_bus_id, "ffff:fe:01.0");
    gpuprobe_context_destroy(ctx);
}

/* cuDeviceGet failing: the device cannot be used, the cause says why,
 * the driver's error name cut after 48 bytes. */
static void describe_device_get_fails(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    sc.get_rc = CUDA_ERROR_INVALID_DEVICE;
    gp_device d;
    memset(&d, 0, sizeof d);
    assert_int_equal(gp_cuda_describe(ctx, &d, 3), GPUPROBE_ERR_CUDA);
    assert_int_equal(ctx->cuda_cause, GPUPROBE_CUDA_OTHER);
    assert_string_equal(ctx->cuda_detail, "cuDeviceGet(3) failed with CUDA_ERROR_SCRIPTED");
    static const char long_name[] = "E23456789012345678901234567890123456789012345678X";
    sc.error_name = long_name; /* 49 bytes */
    assert_int_equal(gp_cuda_describe(ctx, &d, 3), GPUPROBE_ERR_CUDA);
    assert_string_equal(ctx->cuda_detail,
                        "cuDeviceGet(3) failed with E23456789012345678901234567890123456789012345678...");
    gpuprobe_context_destroy(ctx);
}

/* ---- a failed driver call's message ------------------------------------- */

static void drv_fail_message(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device d = ctx->devices[1];
    assert_int_equal(gp_cuda_drv_fail(ctx, &d, "cuMemGetInfo_v2", CUDA_ERROR_OUT_OF_MEMORY),
                     GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "cuMemGetInfo_v2 on cuda:0 (Scripted GPU) failed with CUDA_ERROR_SCRIPTED");
    assert_int_equal(gp_cuda_drv_fail(ctx, &d, "cuCtxPushCurrent_v2", CUDA_ERROR_UNKNOWN),
                     GPUPROBE_ERR_CUDA);
    /* The device's name is cut after 64 bytes. */
    memset(d.name, 'n', 64);
    d.name[64] = '\0';
    assert_int_equal(gp_cuda_drv_fail(ctx, &d, "f", CUDA_ERROR_UNKNOWN), GPUPROBE_ERR_CUDA);
    char want[GP_NAME_LEN + 64];
    snprintf(want, sizeof want, "f on cuda:0 (%s) failed with CUDA_ERROR_SCRIPTED", d.name);
    assert_string_equal(gpuprobe_last_error(ctx), want);
    d.name[64] = 'm';
    d.name[65] = '\0';
    assert_int_equal(gp_cuda_drv_fail(ctx, &d, "f", CUDA_ERROR_UNKNOWN), GPUPROBE_ERR_CUDA);
    d.name[64] = '\0';
    snprintf(want, sizeof want, "f on cuda:0 (%s...) failed with CUDA_ERROR_SCRIPTED", d.name);
    assert_string_equal(gpuprobe_last_error(ctx), want);
    /* The driver's error name is cut after 48 bytes. */
    strcpy(d.name, "G");
    sc.error_name = "E23456789012345678901234567890123456789012345678";
    assert_int_equal(gp_cuda_drv_fail(ctx, &d, "f", CUDA_ERROR_UNKNOWN), GPUPROBE_ERR_CUDA);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "f on cuda:0 (G) failed with E23456789012345678901234567890123456789012345678");
    sc.error_name = "E23456789012345678901234567890123456789012345678X";
    assert_int_equal(gp_cuda_drv_fail(ctx, &d, "f", CUDA_ERROR_UNKNOWN), GPUPROBE_ERR_CUDA);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "f on cuda:0 (G) failed with E23456789012345678901234567890123456789012345678...");
    gpuprobe_context_destroy(ctx);
}

/* ---- the primary context ------------------------------------------------- */

/* Entering creates the context once per device and measures its cost as
 * NVML's used memory after less before. */
static void enter_measures_cost(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device *d = &ctx->devices[1];
    sc.nvml_used[0] = 100;
    sc.nvml_used[1] = 600;
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_OK);
    assert_int_equal(gp_cuda_leave(ctx, d), GPUPROBE_OK);
    assert_int_equal(d->context_bytes, 500);
    assert_int_equal(sc.retains, 1);
    assert_int_equal(sc.pushes, 1);
    assert_int_equal(sc.pops, 1);
    assert_int_equal(ctx->cuda->nretained, 1);

    /* Again: held already, so the new reference is given back, and an
     * active context is not measured. */
    sc.active = 1;
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_OK);
    assert_int_equal(gp_cuda_leave(ctx, d), GPUPROBE_OK);
    assert_int_equal(sc.retains, 2);
    assert_int_equal(sc.releases, 1);
    assert_int_equal(ctx->cuda->nretained, 1);
    assert_int_equal(sc.nvml_calls, 2);
    assert_int_equal(d->context_bytes, 500);

    /* Destroying the gpuprobe context gives the held reference back. */
    gpuprobe_context_destroy(ctx);
    assert_int_equal(sc.releases, 2);
}

/* The cost is kept only when both readings succeed and the second is
 * higher. */
static void enter_cost_not_measured(void **state)
{
    (void)state;
    static const struct {
        int rc0, rc1;
        unsigned long long used0, used1;
    } cases[] = {
        {FAIL_CU, 0, 0, 600},   /* the reading before failed */
        {0, FAIL_CU, 100, 600}, /* the reading after failed */
        {0, 0, 600, 600},       /* nothing more used */
        {0, 0, 600, 100},       /* less used */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuprobe_context *ctx = scripted();
        gp_device *d = &ctx->devices[1];
        /* version 2 fails: version 1 is not there, so the reading fails */
        sc.nvml_rc[0] = cases[i].rc0;
        sc.nvml_rc[1] = cases[i].rc1;
        sc.nvml_used[0] = cases[i].used0;
        sc.nvml_used[1] = cases[i].used1;
        assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_OK);
        assert_int_equal(gp_cuda_leave(ctx, d), GPUPROBE_OK);
        if (d->context_bytes != 7)
            fail_msg("case %zu: context_bytes %llu", i, (unsigned long long)d->context_bytes);
        gpuprobe_context_destroy(ctx);
    }

    /* Not known to NVML, or the state query failing: nothing measured. */
    gpuprobe_context *ctx = scripted();
    gp_device *d = &ctx->devices[1];
    sc.nvml_used[1] = 600;
    d->nvml = NULL;
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_OK);
    assert_int_equal(gp_cuda_leave(ctx, d), GPUPROBE_OK);
    assert_int_equal(sc.nvml_calls, 0);
    assert_int_equal(d->context_bytes, 7);
    d->nvml = &nvml_handle;
    sc.state_rc = FAIL_CU;
    sc.active = 0;
    ctx->cuda->nretained = 0; /* as if never entered */
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_OK);
    assert_int_equal(gp_cuda_leave(ctx, d), GPUPROBE_OK);
    assert_int_equal(sc.nvml_calls, 0);
    assert_int_equal(d->context_bytes, 7);
    gpuprobe_context_destroy(ctx);
}

/* A device past the context's table (here the slot right after its last
 * entry) is entered, not measured. */
static void enter_device_not_in_table(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device *grown = realloc(ctx->devices, 3 * sizeof *grown);
    assert_non_null(grown);
    ctx->devices = grown;
    ctx->devices[2] = ctx->devices[1];
    sc.nvml_used[1] = 600;
    assert_int_equal(gp_cuda_enter(ctx, &ctx->devices[2]), GPUPROBE_OK);
    assert_int_equal(gp_cuda_leave(ctx, &ctx->devices[2]), GPUPROBE_OK);
    assert_int_equal(ctx->devices[2].context_bytes, 7);
    assert_int_equal(ctx->devices[1].context_bytes, 7);
    gpuprobe_context_destroy(ctx);
}

static void enter_failures(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device *d = &ctx->devices[1];
    sc.get_rc = CUDA_ERROR_INVALID_DEVICE;
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_ERR_CUDA);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "cuDeviceGet on cuda:0 (Scripted GPU) failed with CUDA_ERROR_SCRIPTED");
    assert_int_equal(sc.retains, 0);
    sc.get_rc = CUDA_SUCCESS;
    sc.retain_rc = CUDA_ERROR_OUT_OF_MEMORY;
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuDevicePrimaryCtxRetain on cuda:0"));
    assert_int_equal(ctx->cuda->nretained, 0);
    sc.retain_rc = CUDA_SUCCESS;
    sc.push_rc = FAIL_CU;
    assert_int_equal(gp_cuda_enter(ctx, d), GPUPROBE_ERR_CUDA);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuCtxPushCurrent_v2 on cuda:0"));
    assert_int_equal(ctx->cuda->nretained, 1); /* retained: released at destroy */
    sc.pop_rc = FAIL_CU;
    assert_int_equal(gp_cuda_leave(ctx, d), GPUPROBE_ERR_CUDA);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuCtxPopCurrent_v2 on cuda:0"));
    gpuprobe_context_destroy(ctx);
    assert_int_equal(sc.releases, 1);
}

/* ---- the memory fallback ------------------------------------------------- */

static void context_memory(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device *d = &ctx->devices[1];
    sc.mem_free = 300;
    sc.mem_total = 1000;
    gp_memory m;
    memset(&m, 0, sizeof m);
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_OK);
    assert_int_equal(m.total, 1000);
    assert_int_equal(m.available, 300);
    assert_int_equal(m.used, 700);
    assert_int_equal(m.source, GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT);
    assert_true(m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT);
    assert_int_equal(m.context_held, 1);
    assert_int_equal(sc.pushes, 1);
    assert_int_equal(sc.pops, 1);

    /* The context existed: not created by the query. More free than
     * total (a driver's rounding): nothing used. */
    sc.active = 1;
    sc.mem_free = 1200;
    memset(&m, 0, sizeof m);
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_OK);
    assert_false(m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT);
    assert_int_equal(m.used, 0);
    gpuprobe_context_destroy(ctx);
}

static void context_memory_failures(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device *d = &ctx->devices[1];
    gp_memory m;
    memset(&m, 0, sizeof m);
    sc.get_rc = FAIL_CU;
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_ERR_CUDA);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuDeviceGet on cuda:0"));
    sc.get_rc = CUDA_SUCCESS;
    sc.state_rc = FAIL_CU;
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_ERR_CUDA);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuDevicePrimaryCtxGetState on cuda:0"));
    assert_int_equal(sc.retains, 0);
    sc.state_rc = CUDA_SUCCESS;
    sc.retain_rc = FAIL_CU;
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_ERR_CUDA);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuDevicePrimaryCtxRetain on cuda:0"));
    sc.retain_rc = CUDA_SUCCESS;
    /* The query failing: the context is left all the same. */
    sc.meminfo_rc = CUDA_ERROR_OUT_OF_MEMORY;
    sc.mem_total = 1000;
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuMemGetInfo_v2 on cuda:0"));
    assert_int_equal(sc.pops, 1);
    assert_int_equal(m.total, 0);
    /* Leaving failing after a good query: that failure. */
    sc.meminfo_rc = CUDA_SUCCESS;
    sc.pop_rc = FAIL_CU;
    assert_int_equal(gp_cuda_context_memory(ctx, d, &m), GPUPROBE_ERR_CUDA);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cuCtxPopCurrent_v2 on cuda:0"));
    assert_int_equal(m.total, 0);
    gpuprobe_context_destroy(ctx);
}

/* ---- what the library believes of the runtime's count and the state ----- */

static cudaError_t count_rc;
static int count_value;
static cudaError_t s_count(int *n)
{
    *n = count_value;
    return count_rc;
}

static void device_count(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    ctx->cuda->rt.GetDeviceCount = s_count;
    count_rc = cudaSuccess;
    count_value = 3;
    assert_int_equal(gp_cuda_device_count(ctx), 3);
    count_value = -1;
    assert_int_equal(gp_cuda_device_count(ctx), 0);
    count_value = 3;
    count_rc = cudaErrorNoDevice;
    assert_int_equal(gp_cuda_device_count(ctx), 0);
    count_rc = cudaSuccess;
    ctx->cuda_cause = GPUPROBE_CUDA_NO_DEVICE;
    assert_int_equal(gp_cuda_device_count(ctx), 0);
    gpuprobe_context_destroy(ctx);
}

static void context_held(void **state)
{
    (void)state;
    gpuprobe_context *ctx = scripted();
    gp_device *d = &ctx->devices[1];
    sc.active = 5;
    assert_int_equal(gp_cuda_context_held(ctx, d), 1);
    sc.active = 0;
    assert_int_equal(gp_cuda_context_held(ctx, d), 0);
    sc.active = 1;
    sc.state_rc = FAIL_CU;
    assert_int_equal(gp_cuda_context_held(ctx, d), -1);
    sc.state_rc = CUDA_SUCCESS;
    sc.get_rc = FAIL_CU;
    assert_int_equal(gp_cuda_context_held(ctx, d), -1);
    gpuprobe_context_destroy(ctx);
}

/* NVML is reached through the loaded CUDA state; without one, why not. */
static void nvml_without_cuda(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    const char *why = NULL;
    assert_null(gp_cuda_nvml(ctx, &why));
    assert_non_null(why);
    assert_string_equal(why, "CUDA is not loaded");
    assert_null(gp_cuda_nvml(ctx, NULL));
    gpuprobe_context_destroy(ctx);
    ctx = scripted(); /* loaded, with NVML usable */
    why = NULL;
    assert_ptr_equal(gp_cuda_nvml(ctx, &why), &ctx->cuda->nvml);
    assert_null(why);
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    /* The library under test never reads the environment's CUDA here;
     * the script stands in for it. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(describe_all_known),
        cmocka_unit_test(describe_failures_unknown),
        cmocka_unit_test(describe_unterminated),
        cmocka_unit_test(describe_pci_from_attributes),
        cmocka_unit_test(describe_device_get_fails),
        cmocka_unit_test(drv_fail_message),
        cmocka_unit_test(enter_measures_cost),
        cmocka_unit_test(enter_cost_not_measured),
        cmocka_unit_test(enter_device_not_in_table),
        cmocka_unit_test(enter_failures),
        cmocka_unit_test(context_memory),
        cmocka_unit_test(context_memory_failures),
        cmocka_unit_test(device_count),
        cmocka_unit_test(context_held),
        cmocka_unit_test(nvml_without_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* a build without CUDA has no cuda_device.c */

static void no_cuda(void **state)
{
    (void)state;
    print_message("built without CUDA: lib/cuda_device.c is not compiled\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_cuda)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
