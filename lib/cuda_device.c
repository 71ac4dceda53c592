/*
 * cuda_device.c - a CUDA device through the driver API: its description
 * at enumeration, whether this process holds its primary context, free
 * memory read inside that context (the fallback when NVML cannot answer),
 * and entering and leaving the context for work (the context's cost
 * measured through NVML when the entry creates it). Loader floor, built
 * only with CUDA support (no_cuda.c otherwise). See docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cuda_loader.h"

#include <stdlib.h>
#include <string.h>

/* ---- description ---------------------------------------------------------- */

static int drv_attr(const gp_cuda *c, CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    if (c->drv.DeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS || v < 0)
        return 0;
    return v;
}

/* Fill one real CUDA device. Attributes that cannot be read stay unknown
 * (0 / ""); only a failing cuDeviceGet makes the whole device unusable. */
gpuprobe_status gp_cuda_describe(gpuprobe_context *ctx, gp_device *d, int i)
{
    gp_cuda *c = ctx->cuda;
    CUdevice dev;
    CUresult r = c->drv.DeviceGet(&dev, i);
    if (r != CUDA_SUCCESS) {
        char q[64];
        gp_quote(q, sizeof q, gp_cuda_drv_error_name(c, r), 48);
        ctx->cuda_cause = GPUPROBE_CUDA_OTHER;
        gp_snprintf(ctx->cuda_detail, sizeof ctx->cuda_detail,
                    "cuDeviceGet(%d) failed with %s", i, q);
        return GPUPROBE_ERR_CUDA;
    }
    d->kind = GPUPROBE_DEVICE_CUDA;
    d->cuda_index = i;
    gp_snprintf(d->spec, sizeof d->spec, "cuda:%d", i);

    /* What the driver writes is copied up to its NUL or the buffer's end,
     * whichever comes first (gp_strlcpy reads no further). */
    char name[GP_NAME_LEN];
    if (c->drv.DeviceGetName(name, (int)sizeof name, dev) == CUDA_SUCCESS && name[0])
        gp_strlcpy(d->name, name, sizeof d->name);
    else
        gp_snprintf(d->name, sizeof d->name, "CUDA device %d", i);

    CUuuid u;
    if (c->drv.DeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        gp_snprintf(d->uuid, sizeof d->uuid,
                    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                    "%02x%02x%02x%02x%02x%02x",
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                    b[10], b[11], b[12], b[13], b[14], b[15]);
    }

    size_t total = 0;
    if (c->drv.DeviceTotalMem(&total, dev) == CUDA_SUCCESS)
        d->total_memory = (uint64_t)total;

    d->cc_major = drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d->cc_minor = drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->multiprocessors = drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d->clock_khz = drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d->memory_clock_khz = drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d->memory_bus_bits = drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);

    char pci[sizeof d->pci_bus_id];
    if (c->rt.DeviceGetPCIBusId(pci, (int)sizeof pci, i) == cudaSuccess && pci[0]) {
        gp_strlcpy(d->pci_bus_id, pci, sizeof d->pci_bus_id);
    } else {
        (void)c->rt.GetLastError();
        gp_snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "%04x:%02x:%02x.0",
                    (unsigned)drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID) & 0xffffu,
                    (unsigned)drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) & 0xffu,
                    (unsigned)drv_attr(c, dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) & 0xffu);
    }
    return GPUPROBE_OK;
}

int gp_cuda_device_count(gpuprobe_context *ctx)
{
    int n = 0;
    if (ctx->cuda_cause != GPUPROBE_CUDA_AVAILABLE || !ctx->cuda || !ctx->cuda->rt_lib)
        return 0;
    if (ctx->cuda->rt.GetDeviceCount(&n) != cudaSuccess || n < 0)
        return 0;
    return n;
}

/* ---- the primary context -------------------------------------------------- */

int gp_cuda_context_held(gpuprobe_context *ctx, const gp_device *dev)
{
    gp_cuda *c = ctx->cuda;
    CUdevice cudev;
    unsigned pflags = 0;
    int active = 0;
    if (!c || !c->drv_lib || c->drv.DeviceGet(&cudev, dev->cuda_index) != CUDA_SUCCESS ||
        c->drv.DevicePrimaryCtxGetState(cudev, &pflags, &active) != CUDA_SUCCESS)
        return -1;
    return active != 0;
}

gpuprobe_status gp_cuda_drv_fail(gpuprobe_context *ctx, const gp_device *dev,
                                 const char *call, CUresult r)
{
    char qen[64], qname[80];
    gp_quote(qen, sizeof qen, gp_cuda_drv_error_name(ctx->cuda, r), 48);
    gp_quote(qname, sizeof qname, dev->name, 64);
    return gp_fail(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY
                                                      : GPUPROBE_ERR_CUDA,
                   "%s on %s (%s) failed with %s", call, dev->spec, qname, qen);
}

/* NVML's used-memory figure of a device; 0 on success. */
static int nvml_used(gpuprobe_context *ctx, const gp_device *dev, uint64_t *used)
{
    gp_nvml *n = dev->nvml ? gp_cuda_nvml(ctx, NULL) : NULL;
    gp_nvml_mem m;
    const char *call = NULL;
    if (!n || gp_nvml_memory(n, dev->nvml, &m, &call) != GP_NVML_SUCCESS)
        return -1;
    *used = m.used;
    return 0;
}

/* The driver's handle of dev, where CUDA is usable (its driver is loaded
 * and bound). */
static gpuprobe_status device_handle(gpuprobe_context *ctx, const gp_device *dev,
                                     CUdevice *cudev)
{
    CUresult r = ctx->cuda->drv.DeviceGet(cudev, dev->cuda_index);
    return r == CUDA_SUCCESS ? GPUPROBE_OK : gp_cuda_drv_fail(ctx, dev, "cuDeviceGet", r);
}

gpuprobe_status gp_cuda_enter(gpuprobe_context *ctx, const gp_device *dev)
{
    gp_cuda *c = ctx->cuda;
    CUdevice cudev;
    gpuprobe_status st = device_handle(ctx, dev, &cudev);
    if (st != GPUPROBE_OK)
        return st;
    int held = 0;
    for (size_t k = 0; k < c->nretained; k++)
        held |= c->retained[k] == cudev;
    if (!held) { /* room for one more: a few devices, each recorded once */
        CUdevice *grown = realloc(c->retained, (c->nretained + 1) * sizeof *grown);
        if (!grown)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "out of memory recording retained CUDA contexts");
        c->retained = grown;
    }
    /* The retain that creates the primary context (nobody in the process
     * holds it yet) is where its cost shows: measured through NVML, used
     * memory before and after, and kept with the device for capacity
     * estimates, whichever call (a memory query, a matmul) creates it. */
    unsigned pflags = 0;
    int active = 1;
    uint64_t before = 0;
    int measure = c->drv.DevicePrimaryCtxGetState &&
                  c->drv.DevicePrimaryCtxGetState(cudev, &pflags, &active) == CUDA_SUCCESS &&
                  !active && nvml_used(ctx, dev, &before) == 0;
    CUcontext pctx = NULL;
    CUresult r = c->drvctx.PrimaryCtxRetain(&pctx, cudev);
    if (r != CUDA_SUCCESS)
        return gp_cuda_drv_fail(ctx, dev, "cuDevicePrimaryCtxRetain", r);
    if (held)
        (void)c->drvctx.PrimaryCtxRelease(cudev); /* one retain per device */
    else
        c->retained[c->nretained++] = cudev;
    uint64_t after = 0;
    size_t idx = (size_t)(dev - ctx->devices);
    if (measure && idx < ctx->ndevices && nvml_used(ctx, dev, &after) == 0 && after > before)
        ctx->devices[idx].context_bytes = after - before;
    r = c->drvctx.CtxPushCurrent(pctx);
    if (r != CUDA_SUCCESS)
        return gp_cuda_drv_fail(ctx, dev, "cuCtxPushCurrent_v2", r);
    return GPUPROBE_OK;
}

gpuprobe_status gp_cuda_leave(gpuprobe_context *ctx, const gp_device *dev)
{
    CUcontext popped = NULL;
    CUresult r = ctx->cuda->drvctx.CtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS)
        return gp_cuda_drv_fail(ctx, dev, "cuCtxPopCurrent_v2", r);
    return GPUPROBE_OK;
}

/* The context fallback: cuMemGetInfo inside the device's primary context,
 * created when none exists (and then its cost measured when NVML can). */
gpuprobe_status gp_cuda_context_memory(gpuprobe_context *ctx, const gp_device *dev,
                                       gp_memory *out)
{
    gp_cuda *c = ctx->cuda;
    CUdevice cudev;
    gpuprobe_status st = device_handle(ctx, dev, &cudev);
    if (st != GPUPROBE_OK)
        return st;
    unsigned pflags = 0;
    int active = 0;
    CUresult cr = c->drv.DevicePrimaryCtxGetState(cudev, &pflags, &active);
    if (cr != CUDA_SUCCESS)
        return gp_cuda_drv_fail(ctx, dev, "cuDevicePrimaryCtxGetState", cr);

    /* Make the device's primary context (the one the runtime uses) current
     * only for this query (gp_cuda_enter/gp_cuda_leave): the calling
     * thread's current context and device stay as they were, and no other
     * device gets a context. */
    st = gp_cuda_enter(ctx, dev);
    if (st != GPUPROBE_OK)
        return st;
    size_t f = 0, t = 0;
    cr = c->drvctx.MemGetInfo(&f, &t);
    gpuprobe_status lst = gp_cuda_leave(ctx, dev);
    if (cr != CUDA_SUCCESS)
        return gp_cuda_drv_fail(ctx, dev, "cuMemGetInfo_v2", cr);
    if (lst != GPUPROBE_OK)
        return lst;
    out->total = t;
    out->available = f;
    out->used = f < t ? t - f : 0;
    out->source = GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT;
    if (!active)
        out->flags |= GPUPROBE_MEMORY_CREATED_CONTEXT;
    /* The query ran inside the device's primary context, which this process
     * holds from now on (released when the gpuprobe context is destroyed):
     * the free figure already excludes the context's cost. */
    out->context_held = 1; /* its cost, if this call created it: gp_cuda_enter() */
    return GPUPROBE_OK;
}

