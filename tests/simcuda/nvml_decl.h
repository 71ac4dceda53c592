/*
 * nvml_decl.h - the NVML types and functions the simulation provides,
 * declared from the NVML documentation (the CUDA toolkit ships no nvml.h).
 * nvmlReturn_t and its codes are in sim.h.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef SIMCUDA_NVML_DECL_H
#define SIMCUDA_NVML_DECL_H

#include "sim.h"

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlMemory_st {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

/* nvmlClockType_t */
typedef enum nvmlClockType_enum {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu, memory;
} nvmlUtilization_t;

/* What nvmlDeviceGetComputeRunningProcesses_v3 fills (nvml.h's
 * nvmlProcessInfo_t, the same layout as nvmlProcessInfo_v2_t). */
typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* What the unversioned nvmlDeviceGetComputeRunningProcesses fills. */
typedef struct nvmlProcessInfo_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* nvmlPciInfo_t, as nvmlDeviceGetPciInfo_v3 fills it. */
typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2). */
typedef struct nvmlDeviceAttributes_st {
    unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount;
    unsigned int sharedEncoderCount, sharedJpegCount, sharedOfaCount;
    unsigned int gpuInstanceSliceCount, computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

/* NVML_VALUE_NOT_AVAILABLE (-1) in an unsigned long long field. */
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull

#define NVML_TEMPERATURE_GPU 0

#define NVML_STRUCT_VERSION(data, ver) \
    (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

#define API SIM_EXPORT nvmlReturn_t
API nvmlInit_v2(void);
API nvmlInitWithFlags(unsigned int flags);
API nvmlShutdown(void);
SIM_EXPORT const char *nvmlErrorString(nvmlReturn_t result);
API nvmlSystemGetDriverVersion(char *version, unsigned int length);
API nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
API nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
API nvmlDeviceGetCount_v2(unsigned int *deviceCount);
API nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
API nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
API nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
API nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
API nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
API nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
API nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
API nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
API nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode);
API nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice);
API nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice);
API nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device);
API nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
API nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
API nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp);
API nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
API nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
API nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                            nvmlProcessInfo_t *infos);
API nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                            nvmlProcessInfo_t *infos);
API nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                         nvmlProcessInfo_v1_t *infos);
API nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                             nvmlProcessInfo_t *infos);
API nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                             nvmlProcessInfo_t *infos);
API nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                          nvmlProcessInfo_v1_t *infos);
API nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
API nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
API nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id);
API nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id);
API nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes);
API nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen);
API nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth);
API nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen);
API nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth);
API nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int *busWidth);
API nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock);

#undef API

#endif
