/*
 * gpus.c - the GPUs NVML knows, as a snapshot (gpuprobe_gpus_*): every GPU
 * of the machine whether or not CUDA sees it here, with its facts, its MIG
 * devices and the processes on it, and which of them are CUDA devices of
 * this process (matched by UUID). Read once by gpuprobe_gpus_read(); the
 * other calls only look at what was read. No CUDA context is involved.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"
#include "nvml.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NFIELDS (GPUPROBE_GPU_PCIE_MAX_WIDTH + 1)
#define TEXT_LEN 96  /* a UUID, a name, a version: NVML's own bound */
#define WHY_LEN 192  /* one NVML error message */
#define MAX_MIG 64   /* the most MIG devices believed on one GPU */

typedef struct gp_mig {
    gpuprobe_mig_device d; /* its strings point into the buffers below */
    char uuid[TEXT_LEN], name[TEXT_LEN], profile[TEXT_LEN];
    void *h;
} gp_mig;

typedef struct gp_gpu {
    int64_t v[NFIELDS];
    unsigned char known[NFIELDS];
    char why[NFIELDS][WHY_LEN];
    char uuid[TEXT_LEN], name[TEXT_LEN], pci[32], driver[TEXT_LEN];
    gp_mig *mig;
    size_t nmig;
    gpuprobe_process *procs;
    size_t nprocs;
} gp_gpu;

struct gpuprobe_gpus {
    gp_gpu *gpu;
    size_t count;
};

/* Where each string field keeps its text. */
static char *text_of(gp_gpu *g, gpuprobe_gpu_field f)
{
    switch (f) {
    case GPUPROBE_GPU_UUID:
        return g->uuid;
    case GPUPROBE_GPU_NAME:
        return g->name;
    case GPUPROBE_GPU_PCI_BUS_ID:
        return g->pci;
    case GPUPROBE_GPU_DRIVER_VERSION:
        return g->driver;
    default:
        return NULL;
    }
}

/* ---- recording what NVML answered ------------------------------------------- */

/* Field f from NVML's code: known with v, or unknown and why. */
static void put(gp_gpu *g, const gp_nvml *n, gpuprobe_gpu_field f, int rc, const char *call,
                int64_t v)
{
    if (rc == GP_NVML_SUCCESS) {
        g->v[f] = v;
        g->known[f] = 1;
        g->why[f][0] = '\0';
    } else {
        g->known[f] = 0;
        gp_nvml_error(n, call, rc, g->why[f], sizeof g->why[f]);
    }
}

/* Every field still unknown gets the same reason. */
static void unknown_all(gp_gpu *g, const char *why)
{
    for (int f = 0; f < NFIELDS; f++)
        if (!g->known[f])
            gp_strlcpy(g->why[f], why, sizeof g->why[f]);
}

/* The CUDA ordinal of the CUDA device whose UUID is uuid, or -1. */
static int cuda_index_of(const gpuprobe_context *ctx, const char *uuid)
{
    for (size_t i = 1; uuid[0] && i < ctx->ndevices; i++) {
        const gp_device *d = &ctx->devices[i];
        if (d->kind == GPUPROBE_DEVICE_CUDA && strcasecmp(d->uuid, uuid) == 0)
            return d->cuda_index;
    }
    return -1;
}

static void read_strings(const gp_nvml *n, void *h, gp_gpu *g)
{
    const char *call;
    int rc = gp_nvml_uuid(n, h, g->uuid, sizeof g->uuid, &call);
    put(g, n, GPUPROBE_GPU_UUID, rc, call, 0);
    rc = gp_nvml_name(n, h, g->name, sizeof g->name, &call);
    put(g, n, GPUPROBE_GPU_NAME, rc, call, 0);
    rc = gp_nvml_pci_bus_id(n, h, g->pci, sizeof g->pci, &call);
    put(g, n, GPUPROBE_GPU_PCI_BUS_ID, rc, call, 0);
}

static void read_memory(const gp_nvml *n, void *h, gp_gpu *g)
{
    gp_nvml_mem m;
    const char *call;
    int rc = gp_nvml_memory(n, h, &m, &call);
    put(g, n, GPUPROBE_GPU_TOTAL_BYTES, rc, call, (int64_t)m.total);
    put(g, n, GPUPROBE_GPU_USED_BYTES, rc, call, (int64_t)m.used);
    put(g, n, GPUPROBE_GPU_FREE_BYTES, rc, call, (int64_t)(m.free <= m.total ? m.free : m.total));
    put(g, n, GPUPROBE_GPU_RESERVED_BYTES, rc, call, (int64_t)m.reserved);
}

/* Compute capability, MIG mode and the NVML health figures. */
static void read_facts(const gp_nvml *n, void *h, gp_gpu *g)
{
    static const struct {
        gpuprobe_gpu_field f;
        gp_nvml_query q;
    } health[] = {
        {GPUPROBE_GPU_GPU_UTILIZATION, GP_NVML_GPU_UTILIZATION},
        {GPUPROBE_GPU_MEMORY_UTILIZATION, GP_NVML_MEMORY_UTILIZATION},
        {GPUPROBE_GPU_TEMPERATURE_C, GP_NVML_TEMPERATURE},
        {GPUPROBE_GPU_POWER_MW, GP_NVML_POWER},
        {GPUPROBE_GPU_POWER_LIMIT_MW, GP_NVML_POWER_LIMIT},
        {GPUPROBE_GPU_PCIE_GEN, GP_NVML_PCIE_GEN},
        {GPUPROBE_GPU_PCIE_WIDTH, GP_NVML_PCIE_WIDTH},
        {GPUPROBE_GPU_PCIE_MAX_GEN, GP_NVML_PCIE_MAX_GEN},
        {GPUPROBE_GPU_PCIE_MAX_WIDTH, GP_NVML_PCIE_MAX_WIDTH},
    };
    const char *call;
    int major = 0, minor = 0;
    int rc = gp_nvml_cc(n, h, &major, &minor, &call);
    put(g, n, GPUPROBE_GPU_CC_MAJOR, rc, call, major);
    put(g, n, GPUPROBE_GPU_CC_MINOR, rc, call, minor);
    unsigned cur = 0, pending = 0;
    rc = n->f.DeviceGetMigMode ? n->f.DeviceGetMigMode(h, &cur, &pending) : GP_NVML_MISSING;
    put(g, n, GPUPROBE_GPU_MIG_MODE, rc, "nvmlDeviceGetMigMode", cur == 1);
    for (size_t k = 0; k < sizeof health / sizeof health[0]; k++) {
        int64_t v = 0;
        rc = gp_nvml_query_int(n, h, health[k].q, &v, &call);
        put(g, n, health[k].f, rc, call, v);
    }
}

/* ---- MIG devices ------------------------------------------------------------ */

/* "NVIDIA H200 MIG 1g.18gb" -> "1g.18gb"; "" when the name has no "MIG ". */
static void profile_of(const char *name, char *out, size_t size)
{
    const char *tag = NULL;
    for (const char *p = strstr(name, "MIG "); p; p = strstr(p + 1, "MIG "))
        tag = p;
    gp_strlcpy(out, tag ? tag + 4 : "", size);
}

/* MIG device i of the GPU: 1 when there is one (m filled), 0 when not. */
static int read_mig(gpuprobe_context *ctx, const gp_nvml *n, void *gpu, unsigned i, gp_mig *m)
{
    void *h = NULL;
    if (n->f.DeviceGetMigDeviceHandleByIndex(gpu, i, &h) != GP_NVML_SUCCESS || !h)
        return 0;
    const char *call;
    gpuprobe_mig_device d = GPUPROBE_MIG_DEVICE_INIT;
    d.mig_index = (int32_t)i;
    if (gp_nvml_uuid(n, h, m->uuid, sizeof m->uuid, &call) != GP_NVML_SUCCESS)
        m->uuid[0] = '\0';
    if (gp_nvml_name(n, h, m->name, sizeof m->name, &call) != GP_NVML_SUCCESS)
        m->name[0] = '\0';
    profile_of(m->name, m->profile, sizeof m->profile);
    unsigned id = 0;
    if (gp_nvml_mig_id(n, h, 0, &id, &call) == GP_NVML_SUCCESS && id <= INT32_MAX)
        d.gpu_instance_id = (int32_t)id;
    if (gp_nvml_mig_id(n, h, 1, &id, &call) == GP_NVML_SUCCESS && id <= INT32_MAX)
        d.compute_instance_id = (int32_t)id;
    gp_nvml_attributes a;
    if (gp_nvml_mig_attributes(n, h, &a, &call) == GP_NVML_SUCCESS) {
        d.slices = a.gpu_instance_slices <= 64 ? (int32_t)a.gpu_instance_slices : -1;
        d.multiprocessors = a.multiprocessors <= 65536 ? (int32_t)a.multiprocessors : -1;
    }
    gp_nvml_mem mem;
    if (gp_nvml_memory(n, h, &mem, &call) == GP_NVML_SUCCESS) {
        d.total_bytes = mem.total;
        d.used_bytes = mem.used;
        d.free_bytes = mem.free <= mem.total ? mem.free : mem.total;
    }
    d.cuda_index = cuda_index_of(ctx, m->uuid);
    m->d = d;
    m->h = h;
    return 1;
}

/* The MIG devices of a GPU in MIG mode, in NVML's order. */
static gpuprobe_status read_migs(gpuprobe_context *ctx, const gp_nvml *n, void *h, gp_gpu *g)
{
    unsigned max = 0;
    int rc = n->f.DeviceGetMaxMigDeviceCount ? n->f.DeviceGetMaxMigDeviceCount(h, &max)
                                             : GP_NVML_MISSING;
    if (rc == GP_NVML_SUCCESS && !n->f.DeviceGetMigDeviceHandleByIndex)
        rc = GP_NVML_MISSING;
    if (rc != GP_NVML_SUCCESS) {
        put(g, n, GPUPROBE_GPU_MIG_DEVICES, rc,
            n->f.DeviceGetMaxMigDeviceCount ? "nvmlDeviceGetMaxMigDeviceCount"
                                            : "nvmlDeviceGetMigDeviceHandleByIndex", 0);
        return GPUPROBE_OK;
    }
    max = max <= MAX_MIG ? max : MAX_MIG;
    g->mig = max ? calloc(max, sizeof *g->mig) : NULL;
    if (max && !g->mig)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory listing MIG devices");
    for (unsigned i = 0; i < max; i++)
        g->nmig += (size_t)read_mig(ctx, n, h, i, &g->mig[g->nmig]);
    put(g, n, GPUPROBE_GPU_MIG_DEVICES, GP_NVML_SUCCESS, "", (int64_t)g->nmig);
    return GPUPROBE_OK;
}

/* ---- processes ------------------------------------------------------------- */

/* Append NVML's list of one kind on one device (a GPU, or MIG device m);
 * a process already listed from this device's compute list gains the
 * graphics bit instead. NVML's code. */
static int add_list(const gp_nvml *n, void *h, int graphics, const gp_mig *m, gp_gpu *g,
                    size_t first, const char **call)
{
    gp_nvml_process *list = NULL;
    unsigned count = 0;
    int rc = gp_nvml_processes(n, h, graphics, &list, &count, call);
    if (rc == GP_NVML_SUCCESS && count) {
        gpuprobe_process *grown = realloc(g->procs, (g->nprocs + count) * sizeof *grown);
        if (grown)
            g->procs = grown;
        else
            rc = GP_NVML_NO_MEMORY;
    }
    for (unsigned i = 0; rc == GP_NVML_SUCCESS && i < count; i++) {
        const gp_nvml_process *p = &list[i];
        size_t k = first;
        while (k < g->nprocs && g->procs[k].pid != p->pid)
            k++;
        gpuprobe_process *q = &g->procs[k];
        if (k == g->nprocs) {
            *q = (gpuprobe_process)GPUPROBE_PROCESS_INIT;
            q->pid = p->pid;
            q->mig_index = m ? m->d.mig_index : -1;
            q->gpu_instance_id = p->gi != GP_NVML_NO_ID && p->gi <= INT32_MAX ? (int32_t)p->gi
                                 : m ? m->d.gpu_instance_id : -1;
            q->compute_instance_id = p->ci != GP_NVML_NO_ID && p->ci <= INT32_MAX
                                         ? (int32_t)p->ci
                                     : m ? m->d.compute_instance_id : -1;
            g->nprocs++;
        }
        q->type |= graphics ? GPUPROBE_PROCESS_GRAPHICS : GPUPROBE_PROCESS_COMPUTE;
        if (q->used_bytes == GPUPROBE_UNKNOWN_BYTES && p->used != GP_NVML_NOT_AVAILABLE)
            q->used_bytes = p->used;
    }
    free(list);
    return rc;
}

/* Both lists of a GPU, or of each of its MIG devices: all of them or, when
 * one fails, none (PROCESSES unknown and why). */
static gpuprobe_status read_processes(gpuprobe_context *ctx, const gp_nvml *n, void *h,
                                      gp_gpu *g)
{
    int rc = GP_NVML_SUCCESS;
    const char *call = "";
    size_t devices = g->nmig ? g->nmig : 1;
    for (size_t d = 0; d < devices && rc == GP_NVML_SUCCESS; d++) {
        const gp_mig *m = g->nmig ? &g->mig[d] : NULL;
        size_t first = g->nprocs;
        rc = add_list(n, m ? m->h : h, 0, m, g, first, &call);
        if (rc == GP_NVML_SUCCESS)
            rc = add_list(n, m ? m->h : h, 1, m, g, first, &call);
    }
    if (rc == GP_NVML_NO_MEMORY)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory listing processes");
    if (rc != GP_NVML_SUCCESS) {
        free(g->procs);
        g->procs = NULL;
        g->nprocs = 0;
    }
    put(g, n, GPUPROBE_GPU_PROCESSES, rc, call, (int64_t)g->nprocs);
    return GPUPROBE_OK;
}

/* ---- one GPU, the snapshot ------------------------------------------------------ */

static gpuprobe_status read_gpu(gpuprobe_context *ctx, const gp_nvml *n, unsigned i,
                                const char *driver, const char *driver_why, gp_gpu *g)
{
    void *h = NULL;
    put(g, n, GPUPROBE_GPU_INDEX, GP_NVML_SUCCESS, "", i);
    gp_strlcpy(g->driver, driver, sizeof g->driver);
    g->known[GPUPROBE_GPU_DRIVER_VERSION] = driver[0] != '\0';
    gp_strlcpy(g->why[GPUPROBE_GPU_DRIVER_VERSION], driver_why, WHY_LEN);
    int rc = n->f.DeviceGetHandleByIndex(i, &h);
    if (rc != GP_NVML_SUCCESS || !h) {
        char why[WHY_LEN];
        gp_nvml_error(n, "nvmlDeviceGetHandleByIndex_v2", rc, why, sizeof why);
        unknown_all(g, why);
        return GPUPROBE_OK;
    }
    read_strings(n, h, g);
    read_memory(n, h, g);
    read_facts(n, h, g);
    int64_t cuda = g->known[GPUPROBE_GPU_UUID] ? cuda_index_of(ctx, g->uuid) : -1;
    put(g, n, GPUPROBE_GPU_CUDA_INDEX, GP_NVML_SUCCESS, "", cuda);
    gpuprobe_status st = GPUPROBE_OK;
    if (g->known[GPUPROBE_GPU_MIG_MODE] && g->v[GPUPROBE_GPU_MIG_MODE] == 1)
        st = read_migs(ctx, n, h, g);
    else
        put(g, n, GPUPROBE_GPU_MIG_DEVICES, GP_NVML_SUCCESS, "", 0);
    return st == GPUPROBE_OK ? read_processes(ctx, n, h, g) : st;
}

void gpuprobe_gpus_destroy(gpuprobe_gpus *gpus)
{
    if (!gpus)
        return;
    for (size_t i = 0; i < gpus->count; i++) {
        free(gpus->gpu[i].mig);
        free(gpus->gpu[i].procs);
    }
    free(gpus->gpu);
    free(gpus);
}

/* NVML for the snapshot and the GPUs it counts. */
static gpuprobe_status open_nvml(gpuprobe_context *ctx, gp_nvml **out, unsigned *count)
{
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    const char *why = "not loaded";
    gp_nvml *n = gp_cuda_nvml(ctx, &why);
    if (!n)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED, "NVML is not usable: %s", why);
    unsigned c = 0;
    int rc = n->f.DeviceGetCount && n->f.DeviceGetHandleByIndex ? n->f.DeviceGetCount(&c)
                                                                : GP_NVML_MISSING;
    if (rc == GP_NVML_SUCCESS && c > GP_MAX_GPUS)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA,
                       "nvmlDeviceGetCount_v2 says %u GPUs, more than %d", c, GP_MAX_GPUS);
    if (rc != GP_NVML_SUCCESS) {
        char e[WHY_LEN];
        gp_nvml_error(n, n->f.DeviceGetCount ? "nvmlDeviceGetCount_v2"
                                             : "nvmlDeviceGetHandleByIndex_v2", rc, e, sizeof e);
        return gp_fail(ctx, rc == GP_NVML_MISSING ? GPUPROBE_ERR_UNSUPPORTED : GPUPROBE_ERR_CUDA,
                       "%s", e);
    }
    *out = n;
    *count = c;
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_gpus_read(gpuprobe_context *ctx, unsigned flags, gpuprobe_gpus **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "gpuprobe_gpus_read: NULL argument");
    if (flags)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "gpuprobe_gpus_read: flags must be 0");
    gp_nvml *n = NULL;
    unsigned count = 0;
    gpuprobe_status st = open_nvml(ctx, &n, &count);
    if (st != GPUPROBE_OK)
        return st;
    gpuprobe_gpus *g = calloc(1, sizeof *g);
    if (g && count && !(g->gpu = calloc(count, sizeof *g->gpu))) {
        free(g);
        g = NULL;
    }
    if (!g)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory for %u GPUs", count);
    char driver[TEXT_LEN] = "", driver_why[WHY_LEN] = "";
    const char *call;
    int rc = gp_nvml_driver_version(n, driver, sizeof driver, &call);
    if (rc != GP_NVML_SUCCESS)
        gp_nvml_error(n, call, rc, driver_why, sizeof driver_why);
    for (unsigned i = 0; i < count && st == GPUPROBE_OK; i++, g->count++)
        st = read_gpu(ctx, n, i, driver, driver_why, &g->gpu[i]);
    if (st != GPUPROBE_OK) {
        gpuprobe_gpus_destroy(g);
        return st;
    }
    *out = g;
    return gp_ok(ctx);
}

/* ---- reading the snapshot --------------------------------------------------------- */

size_t gpuprobe_gpus_count(const gpuprobe_gpus *gpus)
{
    return gpus ? gpus->count : 0;
}

/* The GPU and field asked for, checked: GPUPROBE_OK and *g, or the error. */
static gpuprobe_status field_of(const gpuprobe_gpus *gpus, size_t gpu, gpuprobe_gpu_field f,
                                int string, gp_gpu **g)
{
    if (!gpus || (unsigned)f >= NFIELDS)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (gpu >= gpus->count)
        return GPUPROBE_ERR_NOT_FOUND;
    *g = &gpus->gpu[gpu];
    if ((text_of(*g, f) != NULL) != string)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    return (*g)->known[f] ? GPUPROBE_OK : GPUPROBE_ERR_UNSUPPORTED;
}

gpuprobe_status gpuprobe_gpus_get_int(const gpuprobe_gpus *gpus, size_t gpu,
                                      gpuprobe_gpu_field field, int64_t *value)
{
    gp_gpu *g = NULL;
    gpuprobe_status st = value ? field_of(gpus, gpu, field, 0, &g) : GPUPROBE_ERR_INVALID_ARGUMENT;
    if (st == GPUPROBE_OK)
        *value = g->v[field];
    return st;
}

gpuprobe_status gpuprobe_gpus_get_string(const gpuprobe_gpus *gpus, size_t gpu,
                                         gpuprobe_gpu_field field, const char **value)
{
    gp_gpu *g = NULL;
    gpuprobe_status st = value ? field_of(gpus, gpu, field, 1, &g) : GPUPROBE_ERR_INVALID_ARGUMENT;
    if (st == GPUPROBE_OK)
        *value = text_of(g, field);
    return st;
}

const char *gpuprobe_gpus_why(const gpuprobe_gpus *gpus, size_t gpu, gpuprobe_gpu_field field)
{
    if (!gpus)
        return "no snapshot";
    if (gpu >= gpus->count)
        return "no such GPU";
    if ((unsigned)field >= NFIELDS)
        return "unknown field";
    return gpus->gpu[gpu].known[field] ? "" : gpus->gpu[gpu].why[field];
}

/* out's size checked against the 1.2 struct, then the first size bytes of
 * src copied (a later caller's larger struct keeps its own tail). */
static gpuprobe_status copy_out(void *out, size_t min, const void *src, size_t have)
{
    size_t size = 0;
    memcpy(&size, out, sizeof size);
    if (size < min)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    size_t n = size < have ? size : have;
    memcpy((char *)out + sizeof size, (const char *)src + sizeof size, n - sizeof size);
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_gpus_mig_device(const gpuprobe_gpus *gpus, size_t gpu, size_t index,
                                         gpuprobe_mig_device *out)
{
    if (!gpus || !out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (gpu >= gpus->count || index >= gpus->gpu[gpu].nmig)
        return GPUPROBE_ERR_NOT_FOUND;
    const gp_mig *m = &gpus->gpu[gpu].mig[index];
    gpuprobe_mig_device d = m->d;
    d.uuid = m->uuid;
    d.name = m->name;
    d.profile = m->profile;
    return copy_out(out, sizeof d, &d, sizeof d);
}

gpuprobe_status gpuprobe_gpus_process(const gpuprobe_gpus *gpus, size_t gpu, size_t index,
                                      gpuprobe_process *out)
{
    if (!gpus || !out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (gpu >= gpus->count || index >= gpus->gpu[gpu].nprocs)
        return GPUPROBE_ERR_NOT_FOUND;
    return copy_out(out, sizeof *out, &gpus->gpu[gpu].procs[index], sizeof *out);
}
