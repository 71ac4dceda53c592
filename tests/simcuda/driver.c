/*
 * driver.c - the simulated CUDA driver API, built as libcuda.so.1.
 *
 * Functions are defined under the names cuda.h declares them; where the
 * header maps a name to a versioned symbol (cuMemGetInfo ->
 * cuMemGetInfo_v2, cuCtxPushCurrent -> cuCtxPushCurrent_v2, ...) the
 * definition takes that symbol name, as in the real library.
 *
 * Semantics simulated: cuInit decides once (CUDA_VISIBLE_DEVICES and
 * CUDA_DEVICE_ORDER are read then; no visible device is
 * CUDA_ERROR_NO_DEVICE; a configured cuinit_error wins); every other call
 * but the version and error-name ones needs a successful cuInit. Primary
 * contexts are reference counted (retain creates one, charging its memory
 * cost; the last release destroys it with everything allocated in it);
 * each thread has a context stack.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "sim.h"

#include <stdio.h>
#include <string.h>

/* The simulated runtime checks for this to know the driver is present. */
SIM_EXPORT const int simcuda_driver = 1;

#define ENTER(name)                                                           \
    sim_call call_;                                                           \
    int inj_ = 0;                                                             \
    if (sim_begin(&call_, SIM_DRV, name, &inj_) == 1)                         \
    return (CUresult)sim_end(&call_, inj_)
#define LEAVE(r) return (CUresult)sim_end(&call_, inj_ ? inj_ : (int)(r))

static CUresult need_init(void)
{
    return sim.drv_init_done ? sim.drv_init_result : CUDA_ERROR_NOT_INITIALIZED;
}

static sim_unit *device(CUdevice d, CUresult *r)
{
    *r = need_init();
    if (*r != CUDA_SUCCESS)
        return NULL;
    sim_unit *u = sim_unit_of((int)d);
    if (!u)
        *r = CUDA_ERROR_INVALID_DEVICE;
    return u;
}

/* The current context, usable: CUDA_SUCCESS, or why not. */
static CUresult current(sim_ctx **out)
{
    CUresult r = need_init();
    if (r != CUDA_SUCCESS)
        return r;
    sim_ctx *c = sim_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!c->active)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (c->fault)
        return sim_cu_from_rt(c->fault);
    *out = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    ENTER("cuInit");
    if (Flags != 0)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    LEAVE(sim_driver_init());
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    ENTER("cuDriverGetVersion");
    if (!driverVersion)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    *driverVersion = sim.cfg.driver_version;
    LEAVE(CUDA_SUCCESS);
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    ENTER("cuGetErrorName");
    if (!pStr)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    *pStr = sim_cu_name(error);
    if (*pStr && sim.cfg.error_name[0])
        *pStr = sim.cfg.error_name;
    LEAVE(*pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    ENTER("cuGetErrorString");
    if (!pStr)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    *pStr = !sim_cu_name(error) ? NULL : sim.cfg.error_text[0] ? sim.cfg.error_text : sim_cu_string(error);
    LEAVE(*pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    ENTER("cuDeviceGetCount");
    if (!count)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    CUresult r = need_init();
    if (r == CUDA_SUCCESS)
        *count = sim.nvisible;
    LEAVE(r);
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal)
{
    ENTER("cuDeviceGet");
    if (!dev)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    CUresult r;
    if (device(ordinal, &r))
        *dev = ordinal;
    LEAVE(r);
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    ENTER("cuDeviceGetName");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && (!name || len <= 0))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u) {
        size_t n = strnlen(u->name, (size_t)len - 1);
        memcpy(name, u->name, n);
        name[n] = '\0';
    }
    LEAVE(r);
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) /* cuDeviceGetUuid_v2 */
{
    ENTER("cuDeviceGetUuid_v2");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && !uuid)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u)
        memcpy(uuid->bytes, u->uuid_bytes, sizeof uuid->bytes);
    LEAVE(r);
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) /* cuDeviceTotalMem_v2 */
{
    ENTER("cuDeviceTotalMem_v2");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && !bytes)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u)
        *bytes = (size_t)u->total;
    LEAVE(r);
}

/* The attributes the simulation knows; others are CUDA_ERROR_NOT_SUPPORTED
 * (a real driver answers them: a test that needs one must add it here). */
static int attribute(const sim_unit *u, CUdevice_attribute a, int *v)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = u->cc_major; return 0;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = u->cc_minor; return 0;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = u->sms; return 0;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = u->clock_khz; return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = u->mem_clock_khz; return 0;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = u->bus_bits; return 0;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = (int)u->l2_bytes; return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = (int)u->pci_bus; return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = (int)u->pci_dev; return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = (int)u->pci_domain; return 0;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; return 0;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; return 0;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = 0; return 0;
    default: return -1;
    }
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    ENTER("cuDeviceGetAttribute");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u && attribute(u, attrib, pi) != 0)
        r = CUDA_ERROR_NOT_SUPPORTED;
    LEAVE(r);
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    ENTER("cuDeviceGetPCIBusId");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && (!pciBusId || len <= 0))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u)
        snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.%X", u->pci_domain, u->pci_bus,
                 u->pci_dev, u->pci_fn);
    LEAVE(r);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    ENTER("cuDevicePrimaryCtxGetState");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && (!flags || !active))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u) {
        *flags = 0;
        *active = u->ctx.active;
    }
    LEAVE(r);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    ENTER("cuDevicePrimaryCtxRetain");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && !pctx)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (u && (r = sim_ctx_retain(u)) == CUDA_SUCCESS)
        *pctx = (CUcontext)(void *)&u->ctx;
    LEAVE(r);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) /* cuDevicePrimaryCtxRelease_v2 */
{
    ENTER("cuDevicePrimaryCtxRelease_v2");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u)
        r = sim_ctx_release(u);
    LEAVE(r);
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) /* cuDevicePrimaryCtxReset_v2 */
{
    ENTER("cuDevicePrimaryCtxReset_v2");
    CUresult r;
    sim_unit *u = device(dev, &r);
    if (u && u->ctx.active)
        sim_ctx_destroy(&u->ctx);
    LEAVE(r);
}

static CUresult valid_ctx(CUcontext ctx, sim_ctx **out)
{
    CUresult r = need_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!ctx || !sim_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    sim_ctx *c = (sim_ctx *)(void *)ctx;
    if (!c->active)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) /* cuCtxPushCurrent_v2 */
{
    ENTER("cuCtxPushCurrent_v2");
    sim_ctx *c = NULL;
    CUresult r = valid_ctx(ctx, &c);
    sim_tls *t = sim_thread();
    if (r == CUDA_SUCCESS && t->depth == SIM_STACK_MAX)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        t->stack[t->depth++] = c;
    LEAVE(r);
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx) /* cuCtxPopCurrent_v2 */
{
    ENTER("cuCtxPopCurrent_v2");
    CUresult r = need_init();
    sim_tls *t = sim_thread();
    if (r == CUDA_SUCCESS && t->depth == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS) {
        sim_ctx *c = t->stack[--t->depth];
        if (pctx)
            *pctx = (CUcontext)(void *)c;
    }
    LEAVE(r);
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    ENTER("cuCtxGetCurrent");
    CUresult r = need_init();
    if (r == CUDA_SUCCESS && !pctx)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *pctx = (CUcontext)(void *)sim_current();
    LEAVE(r);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    ENTER("cuCtxSetCurrent");
    CUresult r = need_init();
    sim_tls *t = sim_thread();
    if (r == CUDA_SUCCESS && !ctx) {
        if (t->depth)
            t->depth--;
    } else if (r == CUDA_SUCCESS) {
        sim_ctx *c = NULL;
        r = valid_ctx(ctx, &c);
        if (r == CUDA_SUCCESS) {
            if (t->depth == 0)
                t->depth = 1;
            t->stack[t->depth - 1] = c;
        }
    }
    LEAVE(r);
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device_out)
{
    ENTER("cuCtxGetDevice");
    sim_ctx *c = NULL;
    CUresult r = device_out ? need_init() : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        c = sim_current();
        if (!c)
            r = CUDA_ERROR_INVALID_CONTEXT;
        else if (!c->active)
            r = CUDA_ERROR_CONTEXT_IS_DESTROYED;
        else
            *device_out = sim_ctx_ordinal(c);
    }
    LEAVE(r);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    ENTER("cuCtxSynchronize");
    sim_ctx *c = NULL;
    CUresult r = current(&c);
    if (r == CUDA_SUCCESS) {
        sim_run_ctx(c);
        if (c->fault)
            r = sim_cu_from_rt(c->fault);
    }
    LEAVE(r);
}

CUresult CUDAAPI cuMemGetInfo(size_t *free_bytes, size_t *total) /* cuMemGetInfo_v2 */
{
    ENTER("cuMemGetInfo_v2");
    sim_ctx *c = NULL;
    CUresult r = (free_bytes && total) ? current(&c) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        *free_bytes = (size_t)sim_unit_free(c->unit);
        *total = (size_t)c->unit->total;
    }
    LEAVE(r);
}
