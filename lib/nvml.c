/*
 * nvml.c - NVML, loaded at run time: the loader, the lookup of a CUDA
 * device's NVML handle by UUID, and the queries (memory, utilisation,
 * temperature, power, compute processes, PCIe link). See nvml.h.
 *
 * Nothing here creates a CUDA context: NVML reads the driver's own
 * accounting, which is how nvidia-smi answers.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nvml.h"
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(field) offsetof(gp_nvml_fns, field)

/* Every function, by the symbol nvml.h maps its name to. A slot listed
 * twice takes the first symbol the library has. */
static const struct {
    const char *symbol;
    size_t slot;
} symbols[] = {
    {"nvmlInit_v2", F(Init)},
    {"nvmlShutdown", F(Shutdown)},
    {"nvmlErrorString", F(ErrorString)},
    {"nvmlDeviceGetCount_v2", F(DeviceGetCount)},
    {"nvmlDeviceGetHandleByIndex_v2", F(DeviceGetHandleByIndex)},
    {"nvmlDeviceGetHandleByUUID", F(DeviceGetHandleByUUID)},
    {"nvmlDeviceGetHandleByPciBusId_v2", F(DeviceGetHandleByPciBusId)},
    {"nvmlDeviceGetUUID", F(DeviceGetUUID)},
    {"nvmlDeviceGetIndex", F(DeviceGetIndex)},
    {"nvmlDeviceGetMemoryInfo", F(DeviceGetMemoryInfo)},
    {"nvmlDeviceGetMemoryInfo_v2", F(DeviceGetMemoryInfo_v2)},
    {"nvmlDeviceGetMigMode", F(DeviceGetMigMode)},
    {"nvmlDeviceIsMigDeviceHandle", F(DeviceIsMigDeviceHandle)},
    {"nvmlDeviceGetDeviceHandleFromMigDeviceHandle", F(DeviceGetDeviceHandleFromMigDeviceHandle)},
    {"nvmlDeviceGetMaxMigDeviceCount", F(DeviceGetMaxMigDeviceCount)},
    {"nvmlDeviceGetMigDeviceHandleByIndex", F(DeviceGetMigDeviceHandleByIndex)},
    {"nvmlDeviceGetUtilizationRates", F(DeviceGetUtilizationRates)},
    {"nvmlDeviceGetTemperature", F(DeviceGetTemperature)},
    {"nvmlDeviceGetPowerUsage", F(DeviceGetPowerUsage)},
    {"nvmlDeviceGetEnforcedPowerLimit", F(DeviceGetEnforcedPowerLimit)},
    {"nvmlDeviceGetComputeRunningProcesses_v3", F(DeviceGetComputeRunningProcesses)},
    {"nvmlDeviceGetComputeRunningProcesses_v2", F(DeviceGetComputeRunningProcesses)},
    {"nvmlDeviceGetComputeRunningProcesses", F(DeviceGetComputeRunningProcesses)},
    {"nvmlDeviceGetCurrPcieLinkGeneration", F(DeviceGetCurrPcieLinkGeneration)},
    {"nvmlDeviceGetCurrPcieLinkWidth", F(DeviceGetCurrPcieLinkWidth)},
    {"nvmlDeviceGetMaxPcieLinkGeneration", F(DeviceGetMaxPcieLinkGeneration)},
    {"nvmlDeviceGetMaxPcieLinkWidth", F(DeviceGetMaxPcieLinkWidth)},
    {"nvmlSystemGetDriverVersion", F(SystemGetDriverVersion)},
    {"nvmlDeviceGetName", F(DeviceGetName)},
    {"nvmlDeviceGetPciInfo_v3", F(DeviceGetPciInfo)},
    {"nvmlDeviceGetCudaComputeCapability", F(DeviceGetCudaComputeCapability)},
    {"nvmlDeviceGetGpuInstanceId", F(DeviceGetGpuInstanceId)},
    {"nvmlDeviceGetComputeInstanceId", F(DeviceGetComputeInstanceId)},
    {"nvmlDeviceGetAttributes_v2", F(DeviceGetAttributes)},
    {"nvmlDeviceGetComputeRunningProcesses_v3", F(ComputeProcesses)},
    {"nvmlDeviceGetComputeRunningProcesses_v2", F(ComputeProcesses)},
    {"nvmlDeviceGetComputeRunningProcesses", F(ComputeProcessesV1)},
    {"nvmlDeviceGetGraphicsRunningProcesses_v3", F(GraphicsProcesses)},
    {"nvmlDeviceGetGraphicsRunningProcesses_v2", F(GraphicsProcesses)},
    {"nvmlDeviceGetGraphicsRunningProcesses", F(GraphicsProcessesV1)},
    {"nvmlDeviceGetMemoryBusWidth", F(DeviceGetMemoryBusWidth)},
    {"nvmlDeviceGetMaxClockInfo", F(DeviceGetMaxClockInfo)},
};

/* NVML_CLOCK_MEM: the memory clock of nvmlClockType_t. */
#define NVML_CLOCK_MEM 2
/* NVML_TEMPERATURE_GPU: the GPU die's sensor. */
#define NVML_TEMPERATURE_GPU 0
/* NVML_DEVICE_MIG_ENABLE */
#define NVML_MIG_ENABLED 1u

void gp_nvml_words(const gp_nvml *n, int rc, char *buf, size_t size)
{
    const char *s = n->f.ErrorString ? n->f.ErrorString(rc) : NULL;
    if (rc == GP_NVML_MISSING)
        gp_snprintf(buf, size, "this NVML cannot say");
    else if (rc == GP_NVML_NO_MEMORY)
        gp_snprintf(buf, size, "out of host memory");
    else
        gp_quote(buf, size, s && s[0] ? s : "no description", 80);
}

void gp_nvml_error(const gp_nvml *n, const char *call, int rc, char *buf, size_t size)
{
    const char *s = n->f.ErrorString ? n->f.ErrorString(rc) : NULL;
    char q[96];
    gp_quote(q, sizeof q, s && s[0] ? s : "no description", 80);
    if (rc == GP_NVML_MISSING)
        gp_snprintf(buf, size, "libnvidia-ml.so.1 lacks %s", call);
    else if (rc == GP_NVML_NO_MEMORY)
        gp_snprintf(buf, size, "out of host memory for what %s gave", call);
    else
        gp_snprintf(buf, size, "%s failed: %s (NVML error %d)", call, q, rc);
}

int gp_nvml_load(gp_nvml *n, int disabled)
{
    if (n->tried)
        return n->ok;
    n->tried = 1;
    if (disabled) {
        gp_strlcpy(n->why, "GPUPROBE_NVML turns NVML off", sizeof n->why);
        return 0;
    }
    void *h = gp_dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        char e[160];
        gp_dlerror(e, sizeof e);
        gp_snprintf(n->why, sizeof n->why, "libnvidia-ml.so.1 cannot be loaded (%s)", e);
        return 0;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        char *slot = (char *)&n->f + symbols[i].slot;
        void *cur = NULL;
        memcpy(&cur, slot, sizeof cur);
        if (!cur)
            (void)gp_dlsym(h, symbols[i].symbol, slot, sizeof cur);
    }
    /* Init and shutdown are the two functions NVML cannot do without;
     * a library lacking either is not initialised. */
    const char *lacks = !n->f.Init ? "nvmlInit_v2" : !n->f.Shutdown ? "nvmlShutdown" : NULL;
    int rc = lacks ? GP_NVML_MISSING : n->f.Init();
    if (rc != GP_NVML_SUCCESS) {
        gp_nvml_error(n, lacks ? lacks : "nvmlInit_v2", rc, n->why, sizeof n->why);
        dlclose(h);
        memset(&n->f, 0, sizeof n->f);
        return 0;
    }
    n->lib = h;
    n->ok = 1;
    return 1;
}

void gp_nvml_unload(gp_nvml *n)
{
    if (!n->lib)
        return;
    (void)n->f.Shutdown();
    dlclose(n->lib);
    n->lib = NULL;
    n->ok = 0;
    memset(&n->f, 0, sizeof n->f);
}

/* The GPU's facts: index, MIG mode, UUID, how many MIG instances. */
static void gpu_facts(const gp_nvml *n, gp_nvml_device *d)
{
    unsigned v = 0, pending = 0;
    if (n->f.DeviceGetIndex && n->f.DeviceGetIndex(d->gpu, &v) == GP_NVML_SUCCESS &&
        v <= GP_MAX_GPUS)
        d->index = (int)v;
    if (n->f.DeviceGetUUID &&
        n->f.DeviceGetUUID(d->gpu, d->gpu_uuid, sizeof d->gpu_uuid) != GP_NVML_SUCCESS)
        d->gpu_uuid[0] = '\0';
    d->gpu_uuid[sizeof d->gpu_uuid - 1] = '\0';
    if (n->f.DeviceGetMigMode &&
        n->f.DeviceGetMigMode(d->gpu, &v, &pending) == GP_NVML_SUCCESS)
        d->mig_mode = v == NVML_MIG_ENABLED;
    if (d->mig)
        d->mig_mode = 1; /* whatever the GPU answers about itself */
    if (d->mig_mode == 0) {
        d->mig_count = 0;
    } else if (d->mig_mode == 1 && n->f.DeviceGetMaxMigDeviceCount &&
               n->f.DeviceGetMigDeviceHandleByIndex &&
               n->f.DeviceGetMaxMigDeviceCount(d->gpu, &v) == GP_NVML_SUCCESS && v <= 64) {
        int count = 0;
        for (unsigned i = 0; i < v; i++) {
            void *m = NULL;
            count += n->f.DeviceGetMigDeviceHandleByIndex(d->gpu, i, &m) == GP_NVML_SUCCESS;
        }
        d->mig_count = count;
    }
}

int gp_nvml_find(const gp_nvml *n, const char *hex, const char *pci,
                 gp_nvml_device *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    out->index = out->mig_index = out->mig_mode = out->mig_count = -1;
    void *h = NULL;
    int rc = GP_NVML_MISSING, mig = 0;
    char uuid[64];
    if (hex && hex[0] && n->f.DeviceGetHandleByUUID) {
        gp_snprintf(uuid, sizeof uuid, "GPU-%s", hex);
        rc = n->f.DeviceGetHandleByUUID(uuid, &h);
        if (rc != GP_NVML_SUCCESS) {
            gp_snprintf(uuid, sizeof uuid, "MIG-%s", hex);
            mig = n->f.DeviceGetHandleByUUID(uuid, &h) == GP_NVML_SUCCESS;
            rc = mig ? GP_NVML_SUCCESS : rc;
        }
    }
    if (rc != GP_NVML_SUCCESS) {
        /* By PCI bus id: that finds a GPU, never a MIG instance. */
        char by_uuid[160];
        gp_nvml_error(n, "nvmlDeviceGetHandleByUUID", rc, by_uuid, sizeof by_uuid);
        if (!pci || !pci[0] || !n->f.DeviceGetHandleByPciBusId) {
            gp_strlcpy(why, by_uuid, why_size);
            return 0;
        }
        rc = n->f.DeviceGetHandleByPciBusId(pci, &h);
        if (rc != GP_NVML_SUCCESS) {
            char by_pci[160];
            gp_nvml_error(n, "nvmlDeviceGetHandleByPciBusId_v2", rc, by_pci, sizeof by_pci);
            gp_snprintf(why, why_size, "%s; %s", by_uuid, by_pci);
            return 0;
        }
        /* A GPU in MIG mode is no CUDA device: the CUDA device at its bus
         * id is one of its instances, whose UUID NVML did not know. */
        unsigned cur = 0, pending = 0;
        if (n->f.DeviceGetMigMode &&
            n->f.DeviceGetMigMode(h, &cur, &pending) == GP_NVML_SUCCESS &&
            cur == NVML_MIG_ENABLED) {
            gp_snprintf(why, why_size, "%s, and the GPU at its PCI bus id is in MIG "
                        "mode (the device is one of its instances)", by_uuid);
            return 0;
        }
    }
    out->h = h;
    out->gpu = h;
    out->mig = mig;
    if (mig) {
        unsigned v = 0;
        if (n->f.DeviceGetIndex && n->f.DeviceGetIndex(h, &v) == GP_NVML_SUCCESS && v <= 64)
            out->mig_index = (int)v;
        void *parent = NULL;
        out->gpu = n->f.DeviceGetDeviceHandleFromMigDeviceHandle &&
                           n->f.DeviceGetDeviceHandleFromMigDeviceHandle(h, &parent) ==
                               GP_NVML_SUCCESS
                       ? parent
                       : NULL;
        out->mig_mode = 1;
    }
    if (out->gpu)
        gpu_facts(n, out);
    return 1;
}

int gp_nvml_memory(const gp_nvml *n, void *h, gp_nvml_mem *out, const char **call)
{
    int rc = GP_NVML_MISSING;
    *call = "nvmlDeviceGetMemoryInfo";
    memset(out, 0, sizeof *out);
    if (n->f.DeviceGetMemoryInfo_v2) {
        gp_nvml_memory_v2 m;
        memset(&m, 0, sizeof m);
        m.version = GP_NVML_MEMORY_V2;
        *call = "nvmlDeviceGetMemoryInfo_v2";
        rc = n->f.DeviceGetMemoryInfo_v2(h, &m);
        if (rc == GP_NVML_SUCCESS) {
            /* Version 2's total is the physical memory, of which the
             * driver reserves some: what is left is what CUDA calls the
             * total (cuDeviceTotalMem). */
            out->reserved = m.reserved <= m.total ? m.reserved : m.total;
            out->total = m.total - out->reserved;
            out->free = m.free;
            out->used = m.used;
            out->have_reserved = 1;
            return rc;
        }
    }
    if (n->f.DeviceGetMemoryInfo) {
        gp_nvml_memory_v1 m;
        memset(&m, 0, sizeof m);
        *call = "nvmlDeviceGetMemoryInfo";
        rc = n->f.DeviceGetMemoryInfo(h, &m);
        if (rc == GP_NVML_SUCCESS) {
            out->total = m.total;
            out->free = m.free;
            out->used = m.used;
        }
    }
    return rc;
}

static int get_uint(gp_nvml_uint_fn fn, void *h, int64_t *v)
{
    unsigned x = 0;
    int rc = fn ? fn(h, &x) : GP_NVML_MISSING;
    if (rc == GP_NVML_SUCCESS)
        *v = x;
    return rc;
}

int gp_nvml_query_int(const gp_nvml *n, void *h, gp_nvml_query q, int64_t *v,
                      const char **call)
{
    const gp_nvml_fns *f = &n->f;
    int rc = GP_NVML_MISSING;
    switch (q) {
    case GP_NVML_GPU_UTILIZATION:
    case GP_NVML_MEMORY_UTILIZATION: {
        gp_nvml_utilization u = {0, 0};
        *call = "nvmlDeviceGetUtilizationRates";
        if (f->DeviceGetUtilizationRates)
            rc = f->DeviceGetUtilizationRates(h, &u);
        if (rc == GP_NVML_SUCCESS)
            *v = q == GP_NVML_GPU_UTILIZATION ? u.gpu : u.memory;
        return rc;
    }
    case GP_NVML_TEMPERATURE: {
        unsigned t = 0;
        *call = "nvmlDeviceGetTemperature";
        if (f->DeviceGetTemperature)
            rc = f->DeviceGetTemperature(h, NVML_TEMPERATURE_GPU, &t);
        if (rc == GP_NVML_SUCCESS)
            *v = t;
        return rc;
    }
    case GP_NVML_PROCESSES: {
        /* The count alone: an empty array answers INSUFFICIENT_SIZE with
         * the count, or SUCCESS when there is none. */
        unsigned count = 0;
        *call = "nvmlDeviceGetComputeRunningProcesses_v3";
        if (f->DeviceGetComputeRunningProcesses)
            rc = f->DeviceGetComputeRunningProcesses(h, &count, NULL);
        if (rc == GP_NVML_ERROR_INSUFFICIENT_SIZE || rc == GP_NVML_SUCCESS) {
            *v = rc == GP_NVML_SUCCESS ? 0 : count;
            rc = GP_NVML_SUCCESS;
        }
        return rc;
    }
    case GP_NVML_POWER:
        *call = "nvmlDeviceGetPowerUsage";
        return get_uint(f->DeviceGetPowerUsage, h, v);
    case GP_NVML_POWER_LIMIT:
        *call = "nvmlDeviceGetEnforcedPowerLimit";
        return get_uint(f->DeviceGetEnforcedPowerLimit, h, v);
    case GP_NVML_PCIE_GEN:
        *call = "nvmlDeviceGetCurrPcieLinkGeneration";
        return get_uint(f->DeviceGetCurrPcieLinkGeneration, h, v);
    case GP_NVML_PCIE_WIDTH:
        *call = "nvmlDeviceGetCurrPcieLinkWidth";
        return get_uint(f->DeviceGetCurrPcieLinkWidth, h, v);
    case GP_NVML_PCIE_MAX_GEN:
        *call = "nvmlDeviceGetMaxPcieLinkGeneration";
        return get_uint(f->DeviceGetMaxPcieLinkGeneration, h, v);
    case GP_NVML_PCIE_MAX_WIDTH:
        *call = "nvmlDeviceGetMaxPcieLinkWidth";
        return get_uint(f->DeviceGetMaxPcieLinkWidth, h, v);
    case GP_NVML_MEMORY_BUS_WIDTH:
        *call = "nvmlDeviceGetMemoryBusWidth";
        return get_uint(f->DeviceGetMemoryBusWidth, h, v);
    case GP_NVML_MAX_MEMORY_CLOCK: {
        unsigned mhz = 0;
        *call = "nvmlDeviceGetMaxClockInfo";
        if (f->DeviceGetMaxClockInfo)
            rc = f->DeviceGetMaxClockInfo(h, NVML_CLOCK_MEM, &mhz);
        if (rc == GP_NVML_SUCCESS)
            *v = mhz;
        return rc;
    }
    }
    *call = "?";
    return GP_NVML_MISSING;
}

/* ---- what the GPUs' snapshot reads ---------------------------------------- */

/* A text NVML writes into a buffer it is given: read into one of NVML's
 * largest size (terminated whatever NVML wrote), copied out on success. */
#define GP_NVML_TEXT_MAX 96

static int copy_text(int rc, const char *tmp, char *buf, size_t size)
{
    if (rc == GP_NVML_SUCCESS)
        gp_strlcpy(buf, tmp, size);
    return rc;
}

int gp_nvml_driver_version(const gp_nvml *n, char *buf, size_t size, const char **call)
{
    char tmp[GP_NVML_TEXT_MAX] = "";
    *call = "nvmlSystemGetDriverVersion";
    if (!n->f.SystemGetDriverVersion)
        return GP_NVML_MISSING;
    int rc = n->f.SystemGetDriverVersion(tmp, sizeof tmp);
    tmp[sizeof tmp - 1] = '\0';
    return copy_text(rc, tmp, buf, size);
}

static int handle_text(int (*fn)(void *, char *, unsigned), void *h, char *buf, size_t size)
{
    char tmp[GP_NVML_TEXT_MAX] = "";
    if (!fn)
        return GP_NVML_MISSING;
    int rc = fn(h, tmp, sizeof tmp);
    tmp[sizeof tmp - 1] = '\0';
    return copy_text(rc, tmp, buf, size);
}

int gp_nvml_name(const gp_nvml *n, void *h, char *buf, size_t size, const char **call)
{
    *call = "nvmlDeviceGetName";
    return handle_text(n->f.DeviceGetName, h, buf, size);
}

int gp_nvml_uuid(const gp_nvml *n, void *h, char *buf, size_t size, const char **call)
{
    *call = "nvmlDeviceGetUUID";
    return handle_text(n->f.DeviceGetUUID, h, buf, size);
}

int gp_nvml_pci_bus_id(const gp_nvml *n, void *h, char *buf, size_t size, const char **call)
{
    gp_nvml_pci p;
    memset(&p, 0, sizeof p);
    *call = "nvmlDeviceGetPciInfo_v3";
    int rc = n->f.DeviceGetPciInfo ? n->f.DeviceGetPciInfo(h, &p) : GP_NVML_MISSING;
    if (rc != GP_NVML_SUCCESS)
        return rc;
    /* busId is "domain:bus:device.function" with an eight-digit domain;
     * CUDA writes the domain with four. Read as numbers, so that either
     * width of domain compares equal. */
    unsigned dom, bus, dev, fn;
    char tail;
    p.bus_id[sizeof p.bus_id - 1] = '\0';
    if (sscanf(p.bus_id, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || bus > 0xff ||
        dev > 0x1f || fn > 7) {
        dom = p.domain;
        bus = p.bus & 0xff;
        dev = p.device & 0x1f;
        fn = 0;
    }
    gp_snprintf(buf, size, "%04X:%02X:%02X.%X", dom, bus, dev, fn);
    return rc;
}

int gp_nvml_cc(const gp_nvml *n, void *h, int *major, int *minor, const char **call)
{
    int a = 0, b = 0;
    *call = "nvmlDeviceGetCudaComputeCapability";
    int rc = n->f.DeviceGetCudaComputeCapability ? n->f.DeviceGetCudaComputeCapability(h, &a, &b)
                                                 : GP_NVML_MISSING;
    if (rc == GP_NVML_SUCCESS) {
        *major = a;
        *minor = b;
    }
    return rc;
}

int gp_nvml_mig_id(const gp_nvml *n, void *h, int which, unsigned *id, const char **call)
{
    gp_nvml_uint_fn fn = which ? n->f.DeviceGetComputeInstanceId : n->f.DeviceGetGpuInstanceId;
    unsigned v = 0;
    *call = which ? "nvmlDeviceGetComputeInstanceId" : "nvmlDeviceGetGpuInstanceId";
    int rc = fn ? fn(h, &v) : GP_NVML_MISSING;
    if (rc == GP_NVML_SUCCESS)
        *id = v;
    return rc;
}

int gp_nvml_mig_attributes(const gp_nvml *n, void *h, gp_nvml_attributes *out, const char **call)
{
    gp_nvml_attributes a;
    memset(&a, 0, sizeof a);
    *call = "nvmlDeviceGetAttributes_v2";
    int rc = n->f.DeviceGetAttributes ? n->f.DeviceGetAttributes(h, &a) : GP_NVML_MISSING;
    if (rc == GP_NVML_SUCCESS)
        *out = a;
    return rc;
}

/* The most processes believed on one device, and the tries of the
 * count-then-list protocol when the list keeps growing. */
#define GP_NVML_MAX_PROCS 4096
#define GP_NVML_LIST_TRIES 4

/* One call of the list: the newer layout, or the first one converted. */
static int list_once(gp_nvml_procs_fn fn, gp_nvml_procs_v1_fn fn1, void *h, unsigned *count,
                     gp_nvml_process *out)
{
    if (fn)
        return fn(h, count, *count ? out : NULL);
    gp_nvml_process_v1 *v1 = *count ? calloc(*count, sizeof *v1) : NULL;
    if (*count && !v1)
        return GP_NVML_NO_MEMORY;
    unsigned room = *count;
    int rc = fn1(h, count, v1);
    for (unsigned i = 0; rc == GP_NVML_SUCCESS && i < *count && i < room; i++) {
        out[i].pid = v1[i].pid;
        out[i].used = v1[i].used;
        out[i].gi = out[i].ci = GP_NVML_NO_ID;
    }
    free(v1);
    return rc;
}

int gp_nvml_processes(const gp_nvml *n, void *h, int graphics, gp_nvml_process **out,
                      unsigned *count, const char **call)
{
    gp_nvml_procs_fn fn = graphics ? n->f.GraphicsProcesses : n->f.ComputeProcesses;
    gp_nvml_procs_v1_fn fn1 = graphics ? n->f.GraphicsProcessesV1 : n->f.ComputeProcessesV1;
    *call = graphics ? "nvmlDeviceGetGraphicsRunningProcesses_v3"
                     : "nvmlDeviceGetComputeRunningProcesses_v3";
    *out = NULL;
    *count = 0;
    if (!fn && !fn1)
        return GP_NVML_MISSING;
    unsigned want = 0; /* an empty list asks for the count */
    gp_nvml_process *list = NULL;
    for (int t = 0; t < GP_NVML_LIST_TRIES; t++) {
        unsigned room = want, got = want;
        int rc = list_once(fn, fn1, h, &got, list);
        if (rc == GP_NVML_SUCCESS && got <= room) {
            *count = got;
            *out = got ? list : NULL;
            if (!got)
                free(list);
            return rc;
        }
        if (rc == GP_NVML_SUCCESS) /* more than there was room for: ask again */
            rc = GP_NVML_ERROR_INSUFFICIENT_SIZE;
        if (rc != GP_NVML_ERROR_INSUFFICIENT_SIZE || got > GP_NVML_MAX_PROCS) {
            free(list);
            return rc;
        }
        /* Room for a few more: processes may start between two calls. */
        want = got + 4;
        gp_nvml_process *grown = realloc(list, want * sizeof *grown);
        if (!grown) {
            free(list);
            return GP_NVML_NO_MEMORY;
        }
        list = grown;
        memset(list, 0, want * sizeof *list);
    }
    free(list);
    return GP_NVML_ERROR_INSUFFICIENT_SIZE;
}
