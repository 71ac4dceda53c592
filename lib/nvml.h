/*
 * nvml.h - run-time loading of NVML (libnvidia-ml.so.1) and the device
 * queries libgpuprobe asks it: memory without a CUDA context, health
 * (utilisation, temperature, power, compute processes), MIG, PCIe and the
 * memory's bus width and clock.
 *
 * NVML is optional: nothing here is needed for CUDA to work. It is never
 * linked; the NVML header is not part of every CUDA toolkit, so the few
 * types used are declared here from the NVML documentation (nvmlReturn_t
 * is an int whose NVML_SUCCESS is 0; nvmlDevice_t an opaque pointer).
 * Every function is looked up by the name nvml.h maps it to
 * (nvmlInit -> nvmlInit_v2, ...); all but init and shutdown are optional,
 * and a missing one makes its query unsupported.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_NVML_H
#define GPUPROBE_NVML_H

#include <stddef.h>
#include <stdint.h>

/* nvmlReturn_t values the library tells apart. */
#define GP_NVML_SUCCESS 0
#define GP_NVML_ERROR_NOT_SUPPORTED 3
#define GP_NVML_ERROR_NOT_FOUND 6
#define GP_NVML_ERROR_INSUFFICIENT_SIZE 7

/* nvmlMemory_t and nvmlMemory_v2_t (version 2: sizeof | 2 << 24). */
typedef struct gp_nvml_memory_v1 {
    unsigned long long total, free, used;
} gp_nvml_memory_v1;
typedef struct gp_nvml_memory_v2 {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} gp_nvml_memory_v2;
#define GP_NVML_MEMORY_V2 ((unsigned)(sizeof(gp_nvml_memory_v2) | 2u << 24))

/* nvmlUtilization_t */
typedef struct gp_nvml_utilization {
    unsigned int gpu, memory;
} gp_nvml_utilization;

typedef int (*gp_nvml_uint_fn)(void *, unsigned *);

/* nvmlPciInfo_t, as nvmlDeviceGetPciInfo_v3 fills it. */
typedef struct gp_nvml_pci {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32]; /* "00000000:19:00.0" */
} gp_nvml_pci;

/* nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2; MIG devices only). */
typedef struct gp_nvml_attributes {
    unsigned multiprocessors, copy_engines, decoders, encoders, jpegs, ofas;
    unsigned gpu_instance_slices, compute_instance_slices;
    unsigned long long memory_mib;
} gp_nvml_attributes;

/* nvmlProcessInfo_v2_t, which the _v3 and _v2 process lists fill, and
 * nvmlProcessInfo_v1_t, which the first version fills. */
typedef struct gp_nvml_process {
    unsigned pid;
    unsigned long long used; /* bytes; GP_NVML_NOT_AVAILABLE: NVML cannot say */
    unsigned gi, ci;         /* GPU and compute instance; GP_NVML_NO_ID outside MIG */
} gp_nvml_process;
typedef struct gp_nvml_process_v1 {
    unsigned pid;
    unsigned long long used;
} gp_nvml_process_v1;
#define GP_NVML_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFull /* NVML_VALUE_NOT_AVAILABLE */
#define GP_NVML_NO_ID 0xFFFFFFFFu
typedef int (*gp_nvml_procs_fn)(void *, unsigned *, gp_nvml_process *);
typedef int (*gp_nvml_procs_v1_fn)(void *, unsigned *, gp_nvml_process_v1 *);

typedef struct gp_nvml_fns {
    int (*Init)(void);                                   /* nvmlInit_v2 */
    int (*Shutdown)(void);
    const char *(*ErrorString)(int);
    int (*DeviceGetCount)(unsigned *);                   /* nvmlDeviceGetCount_v2 */
    int (*DeviceGetHandleByIndex)(unsigned, void **);    /* ..._v2 */
    int (*DeviceGetHandleByUUID)(const char *, void **);
    int (*DeviceGetHandleByPciBusId)(const char *, void **); /* ..._v2 */
    int (*DeviceGetUUID)(void *, char *, unsigned);
    int (*DeviceGetIndex)(void *, unsigned *);
    int (*DeviceGetMemoryInfo)(void *, gp_nvml_memory_v1 *);
    int (*DeviceGetMemoryInfo_v2)(void *, gp_nvml_memory_v2 *);
    int (*DeviceGetMigMode)(void *, unsigned *, unsigned *);
    int (*DeviceIsMigDeviceHandle)(void *, unsigned *);
    int (*DeviceGetDeviceHandleFromMigDeviceHandle)(void *, void **);
    int (*DeviceGetMaxMigDeviceCount)(void *, unsigned *);
    int (*DeviceGetMigDeviceHandleByIndex)(void *, unsigned, void **);
    int (*DeviceGetUtilizationRates)(void *, gp_nvml_utilization *);
    int (*DeviceGetTemperature)(void *, int, unsigned *);
    gp_nvml_uint_fn DeviceGetPowerUsage;
    gp_nvml_uint_fn DeviceGetEnforcedPowerLimit;
    /* _v3, else _v2, else the first version: only the count is asked
     * (a NULL array), which no struct layout changes. */
    int (*DeviceGetComputeRunningProcesses)(void *, unsigned *, void *);
    gp_nvml_uint_fn DeviceGetCurrPcieLinkGeneration;
    gp_nvml_uint_fn DeviceGetCurrPcieLinkWidth;
    gp_nvml_uint_fn DeviceGetMaxPcieLinkGeneration;
    gp_nvml_uint_fn DeviceGetMaxPcieLinkWidth;
    /* The GPUs' snapshot (gpus.c): names, PCI, compute capability, the
     * driver's version, MIG ids and attributes, the process lists (_v3,
     * else _v2, which fill the same layout, else the first version). */
    int (*SystemGetDriverVersion)(char *, unsigned);
    int (*DeviceGetName)(void *, char *, unsigned);
    int (*DeviceGetPciInfo)(void *, gp_nvml_pci *);          /* ..._v3 */
    int (*DeviceGetCudaComputeCapability)(void *, int *, int *);
    gp_nvml_uint_fn DeviceGetGpuInstanceId;
    gp_nvml_uint_fn DeviceGetComputeInstanceId;
    int (*DeviceGetAttributes)(void *, gp_nvml_attributes *); /* ..._v2 */
    gp_nvml_procs_fn ComputeProcesses;
    gp_nvml_procs_v1_fn ComputeProcessesV1;
    gp_nvml_procs_fn GraphicsProcesses;
    gp_nvml_procs_v1_fn GraphicsProcessesV1;
    gp_nvml_uint_fn DeviceGetMemoryBusWidth;                  /* bits */
    int (*DeviceGetMaxClockInfo)(void *, int, unsigned *);   /* MHz */
} gp_nvml_fns;

typedef struct gp_nvml {
    void *lib;          /* libnvidia-ml.so.1 */
    int tried;          /* loading was attempted (once) */
    int ok;             /* nvmlInit succeeded: usable */
    char why[192];      /* when not usable: why, for messages */
    gp_nvml_fns f;
} gp_nvml;

/* Load NVML once and initialise it: 1 when usable; else 0 and n->why says
 * why ("libnvidia-ml.so.1 not found", "nvmlInit_v2 failed: ..."). With
 * disabled set (GPUPROBE_NVML=off) nothing is loaded. */
int gp_nvml_load(gp_nvml *n, int disabled);
/* Shut NVML down and close it. */
void gp_nvml_unload(gp_nvml *n);

/* "<call> failed: <nvmlErrorString> (NVML error N)" into buf. */
void gp_nvml_error(const gp_nvml *n, const char *call, int rc, char *buf, size_t size);
/* The same for people: nvmlErrorString's words alone ("Not Supported"). */
void gp_nvml_words(const gp_nvml *n, int rc, char *buf, size_t size);

/* What NVML says about one CUDA device, found by its UUID. */
typedef struct gp_nvml_device {
    void *h;            /* the device's own handle (a MIG instance's) */
    void *gpu;          /* its GPU's handle (the same for a whole GPU) */
    int mig;            /* 1: a MIG instance */
    int index;          /* the GPU's NVML index; -1 unknown */
    int mig_index;      /* a MIG instance's index in its GPU; -1 unknown */
    int mig_mode;       /* the GPU's current MIG mode, 1 on 0 off; -1 unknown */
    int mig_count;      /* MIG instances of the GPU; -1 unknown */
    char gpu_uuid[96];  /* the GPU's UUID; "" unknown */
} gp_nvml_device;

/*
 * Find the NVML device of a CUDA device: by UUID (hex is the 36 characters
 * after "GPU-"/"MIG-", as cuDeviceGetUuid_v2 gives them; a MIG instance has
 * its own), trying "GPU-" then "MIG-"; by PCI bus id only when the UUID is
 * unknown to NVML and the GPU found there is a whole GPU (a MIG instance
 * shares its parent's bus id). 1 when found (out filled); 0 when not, with
 * why.
 */
int gp_nvml_find(const gp_nvml *n, const char *hex, const char *pci,
                 gp_nvml_device *out, char *why, size_t why_size);

/* Memory of a handle: v2 where the driver has it (reserved known), else
 * v1. NVML's code (GP_NVML_MISSING when the driver has neither), and
 * *call names the function that gave it; *out is zeroed first, so a
 * failure leaves nothing in it. */
typedef struct gp_nvml_mem {
    uint64_t total, free, used, reserved;
    int have_reserved;
} gp_nvml_mem;
int gp_nvml_memory(const gp_nvml *n, void *h, gp_nvml_mem *out, const char **call);

/* Integer queries of one handle; NVML's code, and *call names the NVML
 * function (for messages). -1 (NVML_ERROR_FUNCTION_NOT_FOUND's meaning,
 * never an NVML code) when the driver lacks the function. */
typedef enum gp_nvml_query {
    GP_NVML_GPU_UTILIZATION,
    GP_NVML_MEMORY_UTILIZATION,
    GP_NVML_TEMPERATURE,
    GP_NVML_POWER,
    GP_NVML_POWER_LIMIT,
    GP_NVML_PROCESSES,
    GP_NVML_PCIE_GEN,
    GP_NVML_PCIE_WIDTH,
    GP_NVML_PCIE_MAX_GEN,
    GP_NVML_PCIE_MAX_WIDTH,
    GP_NVML_MEMORY_BUS_WIDTH,  /* bits */
    GP_NVML_MAX_MEMORY_CLOCK   /* MHz, nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM) */
} gp_nvml_query;
#define GP_NVML_MISSING (-1)
int gp_nvml_query_int(const gp_nvml *n, void *h, gp_nvml_query q, int64_t *v,
                      const char **call);

/* ---- What the GPUs' snapshot reads (gpus.c) ----
 *
 * Each returns NVML's code (GP_NVML_MISSING when the driver lacks the
 * function) and names the NVML function in *call; outputs are written only
 * on success, strings always terminated. */

/* Host memory ran out (never an NVML code). */
#define GP_NVML_NO_MEMORY (-2)

/* The driver's version, "580.65.06" (nvmlSystemGetDriverVersion). */
int gp_nvml_driver_version(const gp_nvml *n, char *buf, size_t size, const char **call);
/* The handle's name, "NVIDIA H200" or "NVIDIA H200 MIG 1g.18gb". */
int gp_nvml_name(const gp_nvml *n, void *h, char *buf, size_t size, const char **call);
/* The handle's UUID, "GPU-..." or "MIG-...". */
int gp_nvml_uuid(const gp_nvml *n, void *h, char *buf, size_t size, const char **call);
/* The PCI bus id as CUDA writes it, "0000:19:00.0" (NVML's busId, whose
 * domain has eight digits, read as numbers). */
int gp_nvml_pci_bus_id(const gp_nvml *n, void *h, char *buf, size_t size, const char **call);
/* The compute capability. */
int gp_nvml_cc(const gp_nvml *n, void *h, int *major, int *minor, const char **call);
/* A MIG device's GPU instance id (which 0) or compute instance id (1). */
int gp_nvml_mig_id(const gp_nvml *n, void *h, int which, unsigned *id, const char **call);
/* A MIG device's attributes (slices, SMs, memory). */
int gp_nvml_mig_attributes(const gp_nvml *n, void *h, gp_nvml_attributes *out, const char **call);
/* The compute (graphics 0) or graphics (1) processes on the handle, in a
 * new array (*out, freed by the caller; NULL when there are none) of
 * *count entries. The list is asked for as NVML documents: the count, then
 * the list, again when it grew between the two (a few times, then
 * NVML_ERROR_INSUFFICIENT_SIZE). The first version's entries carry no
 * instance ids (GP_NVML_NO_ID). GP_NVML_NO_MEMORY when the array cannot be
 * allocated. */
int gp_nvml_processes(const gp_nvml *n, void *h, int graphics, gp_nvml_process **out,
                      unsigned *count, const char **call);

#endif
