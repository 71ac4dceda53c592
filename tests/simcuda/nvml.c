/*
 * nvml.c - the simulated NVML, built as libnvidia-ml.so.1. Declared from
 * the NVML documentation (the toolkit ships no nvml.h): nvmlReturn_t is an
 * int enum, nvmlDevice_t an opaque pointer, the versioned symbols are the
 * ones nvml.h maps its names to (nvmlInit -> nvmlInit_v2, ...).
 *
 * Semantics simulated: init/shutdown are reference counted and every other
 * call but nvmlErrorString needs an init; NVML sees every GPU of the fleet,
 * whatever CUDA_VISIBLE_DEVICES says, numbered by PCI bus id (so NVML index
 * and CUDA ordinal can differ); MIG instances are reached through their
 * parent or their MIG- UUID; memory figures come from the same state as
 * the driver's (contexts and allocations of this process included), NVML's
 * total being CUDA's plus the memory the driver reserves. Health figures
 * (utilisation, temperature, power, PCIe link, memory bus width and
 * maximum clocks) are the configured ones, the current PCIe link being
 * pcie_idle while no work is queued on the GPU (power saving) and pcie
 * while some is; compute and graphics processes are the configured other
 * processes (and, for compute, this one while it has a context on the
 * unit); a MIG instance gives its profile in its name, its ids and
 * attributes. A MIG instance's handle answers memory and
 * processes of its own and NVML_ERROR_NOT_SUPPORTED for the physical
 * figures (ask its GPU); utilisation is not supported in MIG mode. A GPU
 * with nvml_access = denied answers NVML_ERROR_NO_PERMISSION to every
 * query of its own, as a container holding only one of its MIG instances
 * sees it.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nvml_decl.h"

#define ENTER(name)                                                           \
    sim_call call_;                                                           \
    int inj_ = 0;                                                             \
    if (sim_begin(&call_, SIM_NVML, name, &inj_) == 1)                        \
    return sim_end(&call_, inj_)
#define LEAVE(r) return sim_end(&call_, inj_ ? inj_ : (r))
#define NEED_INIT()                                                           \
    do {                                                                      \
        if (sim.nvml_refs == 0)                                               \
            LEAVE(NVML_ERROR_UNINITIALIZED);                                  \
    } while (0)

/* NVML's numbering: GPUs by PCI bus id. */
static int by_index(unsigned idx)
{
    int order[SIM_MAX_UNITS], n = 0;
    for (int i = 0; i < sim.cfg.nunits; i++) {
        const sim_unit *u = &sim.cfg.units[i];
        if (u->parent >= 0)
            continue;
        int j = n++;
        for (; j > 0; j--) {
            const sim_unit *v = &sim.cfg.units[order[j - 1]];
            unsigned long long ku = (unsigned long long)u->pci_domain << 24 | u->pci_bus << 16 |
                                    u->pci_dev << 8 | u->pci_fn;
            unsigned long long kv = (unsigned long long)v->pci_domain << 24 | v->pci_bus << 16 |
                                    v->pci_dev << 8 | v->pci_fn;
            if (kv <= ku)
                break;
            order[j] = order[j - 1];
        }
        order[j] = i;
    }
    return idx < (unsigned)n ? order[idx] : -1;
}

static sim_unit *unit(nvmlDevice_t d)
{
    for (int i = 0; i < sim.cfg.nunits; i++)
        if ((void *)d == (void *)&sim.cfg.units[i])
            return &sim.cfg.units[i];
    return NULL;
}

static nvmlDevice_t handle(sim_unit *u) { return (nvmlDevice_t)(void *)u; }

static nvmlReturn_t init(void)
{
    if (sim.cfg.nvml_init_error)
        return sim.cfg.nvml_init_error;
    sim.nvml_refs++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    ENTER("nvmlInit_v2");
    LEAVE(init());
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    ENTER("nvmlInitWithFlags");
    (void)flags;
    LEAVE(init());
}

nvmlReturn_t nvmlShutdown(void)
{
    ENTER("nvmlShutdown");
    NEED_INIT();
    sim.nvml_refs--;
    LEAVE(NVML_SUCCESS);
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    sim_call c;
    sim_begin(&c, SIM_NVML, "nvmlErrorString", NULL);
    const char *s = sim_nvml_string(result);
    if (s && sim.cfg.error_text[0])
        s = sim.cfg.error_text;
    sim_end(&c, 0);
    return s ? s : "Unknown Error";
}

static nvmlReturn_t copy_out(char *dst, unsigned len, const char *src)
{
    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    ENTER("nvmlSystemGetDriverVersion");
    NEED_INIT();
    LEAVE(copy_out(version, length, sim.cfg.driver_string));
}

static nvmlReturn_t cuda_version(int *v)
{
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    *v = sim.cfg.driver_version;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    ENTER("nvmlSystemGetCudaDriverVersion");
    NEED_INIT();
    LEAVE(cuda_version(cudaDriverVersion));
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    ENTER("nvmlSystemGetCudaDriverVersion_v2");
    NEED_INIT();
    LEAVE(cuda_version(cudaDriverVersion));
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    ENTER("nvmlDeviceGetCount_v2");
    NEED_INIT();
    if (!deviceCount)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    unsigned n = 0;
    for (int i = 0; i < sim.cfg.nunits; i++)
        n += sim.cfg.units[i].parent < 0;
    *deviceCount = n;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    ENTER("nvmlDeviceGetHandleByIndex_v2");
    NEED_INIT();
    int u = by_index(index);
    if (!device || u < 0)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *device = handle(&sim.cfg.units[u]);
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    ENTER("nvmlDeviceGetHandleByPciBusId_v2");
    NEED_INIT();
    unsigned dom, bus, dev, fn;
    char tail;
    if (!pciBusId || !device ||
        sscanf(pciBusId, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < sim.cfg.nunits; i++) {
        sim_unit *u = &sim.cfg.units[i];
        if (u->parent < 0 && u->pci_domain == dom && u->pci_bus == bus && u->pci_dev == dev &&
            u->pci_fn == fn) {
            *device = handle(u);
            LEAVE(NVML_SUCCESS);
        }
    }
    LEAVE(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    ENTER("nvmlDeviceGetHandleByUUID");
    NEED_INIT();
    if (!uuid || !device)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < sim.cfg.nunits; i++)
        if (strcasecmp(sim.cfg.units[i].uuid, uuid) == 0) {
            *device = handle(&sim.cfg.units[i]);
            LEAVE(NVML_SUCCESS);
        }
    LEAVE(NVML_ERROR_NOT_FOUND);
}

#define NEED_UNIT(u, d)                                                       \
    NEED_INIT();                                                              \
    sim_unit *u = unit(d);                                                    \
    if (!u)                                                                   \
    LEAVE(NVML_ERROR_INVALID_ARGUMENT)

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    ENTER("nvmlDeviceGetUUID");
    NEED_UNIT(u, device);
    LEAVE(copy_out(uuid, length, u->uuid));
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    ENTER("nvmlDeviceGetName");
    NEED_UNIT(u, device);
    LEAVE(copy_out(name, length, u->name));
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    ENTER("nvmlDeviceGetIndex");
    NEED_UNIT(u, device);
    if (!index)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    int self = (int)(u - sim.cfg.units);
    if (u->parent >= 0) {
        unsigned k = 0;
        for (int i = u->parent + 1; i < self; i++)
            k += sim.cfg.units[i].parent == u->parent;
        *index = k;
        LEAVE(NVML_SUCCESS);
    }
    for (unsigned i = 0; i < SIM_MAX_UNITS; i++)
        if (by_index(i) == self) {
            *index = i;
            LEAVE(NVML_SUCCESS);
        }
    LEAVE(NVML_ERROR_UNKNOWN);
}

/* total, reserved, free, used as NVML reports them. */
static void memory(const sim_unit *u, unsigned long long *t, unsigned long long *r,
                   unsigned long long *f)
{
    *t = u->total + u->reserved;
    *r = u->reserved;
    *f = sim_unit_free(u);
}

/* A GPU whose queries are refused (nvml_access = denied). */
#define NEED_ACCESS(u)                                                        \
    do {                                                                      \
        if ((u)->nvml_denied)                                                 \
            LEAVE(NVML_ERROR_NO_PERMISSION);                                  \
    } while (0)

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *mem)
{
    ENTER("nvmlDeviceGetMemoryInfo");
    NEED_UNIT(u, device);
    NEED_ACCESS(u);
    if (!mem)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    unsigned long long t, r, f;
    memory(u, &t, &r, &f);
    mem->total = t;
    mem->free = f;
    mem->used = t - f; /* version 1 counts the reserved memory as used */
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *mem)
{
    ENTER("nvmlDeviceGetMemoryInfo_v2");
    NEED_UNIT(u, device);
    NEED_ACCESS(u);
    if (!mem)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    if (mem->version != nvmlMemory_v2)
        LEAVE(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    unsigned long long t, r, f;
    memory(u, &t, &r, &f);
    mem->total = t;
    mem->reserved = r;
    mem->free = f;
    mem->used = t - f - r;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode)
{
    ENTER("nvmlDeviceGetMigMode");
    NEED_UNIT(u, device);
    if (!currentMode || !pendingMode || u->parent >= 0)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    if (!u->mig_capable)
        LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *currentMode = *pendingMode = u->nmig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
    ENTER("nvmlDeviceIsMigDeviceHandle");
    NEED_UNIT(u, device);
    if (!isMigDevice)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *isMigDevice = u->parent >= 0;
    LEAVE(NVML_SUCCESS);
}

/* The most MIG instances the GPU can have: 0 when MIG is not supported or
 * not enabled. */
static unsigned max_mig(const sim_unit *u)
{
    return u->mig_capable && u->nmig > 0 ? 7 : 0;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice)
{
    ENTER("nvmlDeviceGetMigDeviceHandleByIndex");
    NEED_UNIT(u, device);
    if (!migDevice || u->parent >= 0)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    /* An index past nvmlDeviceGetMaxMigDeviceCount is an invalid argument;
     * one below it where no instance is, NVML_ERROR_NOT_FOUND. */
    if (index >= max_mig(u))
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    int self = (int)(u - sim.cfg.units);
    unsigned k = 0;
    for (int i = self + 1; i < sim.cfg.nunits; i++)
        if (sim.cfg.units[i].parent == self && k++ == index) {
            *migDevice = handle(&sim.cfg.units[i]);
            LEAVE(NVML_SUCCESS);
        }
    LEAVE(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                          nvmlDevice_t *device)
{
    ENTER("nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
    NEED_UNIT(u, migDevice);
    if (!device || u->parent < 0)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *device = handle(&sim.cfg.units[u->parent]);
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    ENTER("nvmlDeviceGetMaxMigDeviceCount");
    NEED_UNIT(u, device);
    if (!count || u->parent >= 0)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *count = max_mig(u);
    LEAVE(NVML_SUCCESS);
}

/* The physical figures: a GPU's own, refused on a MIG instance's handle. */
#define NEED_GPU(u, d, out)                                                   \
    NEED_UNIT(u, d);                                                          \
    if (!(out))                                                               \
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);                                   \
    if (u->parent >= 0)                                                       \
        LEAVE(NVML_ERROR_NOT_SUPPORTED);                                      \
    NEED_ACCESS(u)

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    ENTER("nvmlDeviceGetUtilizationRates");
    NEED_GPU(u, device, utilization);
    if (u->nmig > 0)
        LEAVE(NVML_ERROR_NOT_SUPPORTED); /* not in MIG mode */
    utilization->gpu = (unsigned)u->util_gpu;
    utilization->memory = (unsigned)u->util_mem;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp)
{
    ENTER("nvmlDeviceGetTemperature");
    NEED_GPU(u, device, temp);
    if (sensorType != NVML_TEMPERATURE_GPU)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *temp = (unsigned)u->temp_c;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    ENTER("nvmlDeviceGetPowerUsage");
    NEED_GPU(u, device, power);
    *power = u->power_mw;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    ENTER("nvmlDeviceGetEnforcedPowerLimit");
    NEED_GPU(u, device, limit);
    *limit = u->power_limit_mw;
    LEAVE(NVML_SUCCESS);
}

/* The link runs at pcie while work is queued on the GPU or one of its MIG
 * instances, at pcie_idle (a power-saving state) otherwise. */
static int link_busy(const sim_unit *u)
{
    int idx = (int)(u - sim.cfg.units);
    for (int i = 0; i < sim.cfg.nunits; i++)
        if ((i == idx || sim.cfg.units[i].parent == idx) && sim_unit_busy(&sim.cfg.units[i]))
            return 1;
    return 0;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
    ENTER("nvmlDeviceGetCurrPcieLinkGeneration");
    NEED_GPU(u, device, currLinkGen);
    *currLinkGen = (unsigned)(link_busy(u) ? u->pcie_gen : u->pcie_idle_gen);
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
    ENTER("nvmlDeviceGetCurrPcieLinkWidth");
    NEED_GPU(u, device, currLinkWidth);
    *currLinkWidth = (unsigned)(link_busy(u) ? u->pcie_width : u->pcie_idle_width);
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
    ENTER("nvmlDeviceGetMaxPcieLinkGeneration");
    NEED_GPU(u, device, maxLinkGen);
    *maxLinkGen = (unsigned)u->pcie_max_gen;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
    ENTER("nvmlDeviceGetMaxPcieLinkWidth");
    NEED_GPU(u, device, maxLinkWidth);
    *maxLinkWidth = (unsigned)u->pcie_max_width;
    LEAVE(NVML_SUCCESS);
}

/* The processes of one unit of the kind asked for (SIM_PROC_COMPUTE or
 * SIM_PROC_GRAPHICS) appended at out[n] (while room lasts): the configured
 * ones, then, for compute, this process while it has a context there. A
 * MIG instance's carry its GPU and compute instance ids, a whole GPU's
 * 0xFFFFFFFF (NVML's "not in MIG mode"). Returns the new count. */
static unsigned unit_procs(const sim_unit *u, int kind, nvmlProcessInfo_t *out, unsigned room,
                           unsigned n)
{
    for (int i = 0; i <= u->nprocs; i++) {
        nvmlProcessInfo_t p = {0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu};
        if (i < u->nprocs) {
            if (!(u->procs[i].type & kind))
                continue;
            p.pid = u->procs[i].pid;
            p.usedGpuMemory = u->procs[i].na ? NVML_VALUE_NOT_AVAILABLE_ULL : u->procs[i].bytes;
        } else if (kind == SIM_PROC_COMPUTE && u->ctx.active) {
            p.pid = (unsigned)getpid();
            p.usedGpuMemory = sim_ctx_cost(u) + u->alloc_bytes;
        } else {
            break;
        }
        if (u->parent >= 0) {
            p.gpuInstanceId = (unsigned)u->gi;
            p.computeInstanceId = (unsigned)u->ci;
        }
        if (out && n < room)
            out[n] = p;
        n++;
    }
    return n;
}

/* The protocol of every version: the unit's processes and, for a GPU in
 * MIG mode, its instances'. Too small an array (an empty one asks for the
 * count) is NVML_ERROR_INSUFFICIENT_SIZE with the count; none running, or
 * all of them returned, NVML_SUCCESS. */
static nvmlReturn_t running_processes(sim_unit *u, int kind, unsigned int *infoCount,
                                      nvmlProcessInfo_t *infos)
{
    unsigned room = *infoCount, n = unit_procs(u, kind, infos, room, 0);
    int self = (int)(u - sim.cfg.units);
    for (int i = self + 1; u->parent < 0 && u->nmig > 0 && i < sim.cfg.nunits; i++)
        if (sim.cfg.units[i].parent == self)
            n = unit_procs(&sim.cfg.units[i], kind, infos, room, n);
    *infoCount = n;
    return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

/* One entry point: its arguments checked, the unit's access, the list. */
#define PROCESSES(name, kind)                                                 \
    ENTER(name);                                                              \
    NEED_UNIT(u, device);                                                     \
    if (!infoCount || (*infoCount > 0 && !infos))                             \
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);                                   \
    NEED_ACCESS(u);                                                           \
    LEAVE(running_processes(u, (kind), infoCount, infos))

/* The same with the first version's layout. */
#define PROCESSES_V1(name, kind)                                              \
    ENTER(name);                                                              \
    NEED_UNIT(u, device);                                                     \
    if (!infoCount || (*infoCount > 0 && !infos))                             \
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);                                   \
    NEED_ACCESS(u);                                                           \
    LEAVE(processes_v1(u, (kind), infoCount, infos))

/* The first version's list (nvmlProcessInfo_v1_t), from the newer one. */
static nvmlReturn_t processes_v1(sim_unit *u, int kind, unsigned int *infoCount,
                                 nvmlProcessInfo_v1_t *infos)
{
    /* At most 8 other processes a unit, and this one. */
    enum { CAP = 9 * SIM_MAX_UNITS };
    nvmlProcessInfo_t all[CAP];
    unsigned room = *infoCount, n = room < CAP ? room : CAP;
    nvmlReturn_t r = running_processes(u, kind, &n, all);
    for (unsigned i = 0; i < n && i < room; i++) {
        infos[i].pid = all[i].pid;
        infos[i].usedGpuMemory = all[i].usedGpuMemory;
    }
    *infoCount = n;
    return r;
}

/* nvml.h maps nvmlDeviceGetComputeRunningProcesses to this version. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    PROCESSES("nvmlDeviceGetComputeRunningProcesses_v3", SIM_PROC_COMPUTE);
}

/* The older versions every libnvidia-ml.so.1 still exports, for programs
 * built against older headers: version 2 fills nvmlProcessInfo_v2_t (the
 * layout of version 3's), the unversioned one nvmlProcessInfo_v1_t. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    PROCESSES("nvmlDeviceGetComputeRunningProcesses_v2", SIM_PROC_COMPUTE);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
    PROCESSES_V1("nvmlDeviceGetComputeRunningProcesses", SIM_PROC_COMPUTE);
}

/* The graphics processes (a display server, a renderer): the same three
 * versions and protocol. */
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
    PROCESSES("nvmlDeviceGetGraphicsRunningProcesses_v3", SIM_PROC_GRAPHICS);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
    PROCESSES("nvmlDeviceGetGraphicsRunningProcesses_v2", SIM_PROC_GRAPHICS);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos)
{
    PROCESSES_V1("nvmlDeviceGetGraphicsRunningProcesses", SIM_PROC_GRAPHICS);
}

/* ---- identity: PCI, compute capability, MIG ids and attributes ---- */

/* A MIG instance answers with its GPU's PCI location (they share it). */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER("nvmlDeviceGetPciInfo_v3");
    NEED_UNIT(u, device);
    if (!pci)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    memset(pci, 0, sizeof *pci);
    pci->domain = u->pci_domain;
    pci->bus = u->pci_bus;
    pci->device = u->pci_dev;
    pci->pciDeviceId = 0x233510deu;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", u->pci_domain,
             u->pci_bus, u->pci_dev);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.%X", u->pci_domain, u->pci_bus,
             u->pci_dev, u->pci_fn);
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    ENTER("nvmlDeviceGetCudaComputeCapability");
    NEED_UNIT(u, device);
    if (!major || !minor)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *major = u->cc_major;
    *minor = u->cc_minor;
    LEAVE(NVML_SUCCESS);
}

/* The ids of a MIG instance; a whole GPU has none (NOT_SUPPORTED). */
static nvmlReturn_t mig_id(const sim_unit *u, int id, unsigned int *out)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (u->parent < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *out = (unsigned)id;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
    ENTER("nvmlDeviceGetGpuInstanceId");
    NEED_UNIT(u, device);
    LEAVE(mig_id(u, u->gi, id));
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
    ENTER("nvmlDeviceGetComputeInstanceId");
    NEED_UNIT(u, device);
    LEAVE(mig_id(u, u->ci, id));
}

/* Only MIG instances have attributes (as the NVML manual says of this
 * call): SMs, slices, memory in MiB. */
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)
{
    ENTER("nvmlDeviceGetAttributes_v2");
    NEED_UNIT(u, device);
    if (!attributes)
        LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    if (u->parent < 0)
        LEAVE(NVML_ERROR_NOT_SUPPORTED);
    memset(attributes, 0, sizeof *attributes);
    attributes->multiprocessorCount = (unsigned)u->sms;
    attributes->sharedCopyEngineCount = (unsigned)u->slices;
    attributes->gpuInstanceSliceCount = (unsigned)u->slices;
    attributes->computeInstanceSliceCount = (unsigned)u->slices;
    attributes->memorySizeMB = u->total >> 20;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int *busWidth)
{
    ENTER("nvmlDeviceGetMemoryBusWidth");
    NEED_GPU(u, device, busWidth);
    *busWidth = (unsigned)u->bus_bits;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    ENTER("nvmlDeviceGetMaxClockInfo");
    NEED_GPU(u, device, clock);
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *clock = (unsigned)(u->clock_khz / 1000); break;
    case NVML_CLOCK_MEM: *clock = (unsigned)(u->mem_clock_khz / 1000); break;
    case NVML_CLOCK_VIDEO: *clock = (unsigned)(u->clock_khz / 1000); break;
    default: LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    }
    LEAVE(NVML_SUCCESS);
}
