/*
 * names.c - names and short descriptions of the codes of the simulated
 * driver, runtime, cuBLAS and NVML. The CUDA lists are generated from the
 * toolkit's headers at configure time (names.cmake): every enumerator with
 * its header value. NVML's come from its documentation (sim.h).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "sim.h"

#include <string.h>

#include "sim_names.inc"

typedef struct entry {
    int code;
    const char *name;
} entry;

#define X(e) {(int)(e), #e},
static const entry cu_table[] = {SIM_CU_LIST(X)};
static const entry rt_table[] = {SIM_RT_LIST(X)};
static const entry blas_table[] = {SIM_BLAS_LIST(X)};
#undef X

#define NV(e) {e, #e},
static const entry nvml_table[] = {
    NV(NVML_SUCCESS) NV(NVML_ERROR_UNINITIALIZED) NV(NVML_ERROR_INVALID_ARGUMENT)
    NV(NVML_ERROR_NOT_SUPPORTED) NV(NVML_ERROR_NO_PERMISSION)
    NV(NVML_ERROR_ALREADY_INITIALIZED) NV(NVML_ERROR_NOT_FOUND)
    NV(NVML_ERROR_INSUFFICIENT_SIZE) NV(NVML_ERROR_INSUFFICIENT_POWER)
    NV(NVML_ERROR_DRIVER_NOT_LOADED) NV(NVML_ERROR_TIMEOUT) NV(NVML_ERROR_IRQ_ISSUE)
    NV(NVML_ERROR_LIBRARY_NOT_FOUND) NV(NVML_ERROR_FUNCTION_NOT_FOUND)
    NV(NVML_ERROR_CORRUPTED_INFOROM) NV(NVML_ERROR_GPU_IS_LOST)
    NV(NVML_ERROR_RESET_REQUIRED) NV(NVML_ERROR_OPERATING_SYSTEM)
    NV(NVML_ERROR_LIB_RM_VERSION_MISMATCH) NV(NVML_ERROR_IN_USE) NV(NVML_ERROR_MEMORY)
    NV(NVML_ERROR_NO_DATA) NV(NVML_ERROR_VGPU_ECC_NOT_ENABLED)
    NV(NVML_ERROR_INSUFFICIENT_RESOURCES) NV(NVML_ERROR_FREQ_NOT_SUPPORTED)
    NV(NVML_ERROR_ARGUMENT_VERSION_MISMATCH) NV(NVML_ERROR_DEPRECATED)
    NV(NVML_ERROR_NOT_READY) NV(NVML_ERROR_GPU_NOT_FOUND) NV(NVML_ERROR_INVALID_STATE)
    NV(NVML_ERROR_UNKNOWN)
};
#undef NV

#define N(t) (sizeof(t) / sizeof((t)[0]))

static const char *lookup(const entry *t, size_t n, int code)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].code == code)
            return t[i].name;
    return NULL;
}

/* Descriptions of the codes a test is likely to see; written for the
 * simulation (the rest get a generic text). Shared by equivalent codes. */
static const struct {
    const char *name;
    const char *text;
} texts[] = {
    {"CUDA_SUCCESS", "no error"},
    {"cudaSuccess", "no error"},
    {"CUBLAS_STATUS_SUCCESS", "success"},
    {"NVML_SUCCESS", "Success"},
    {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {"cudaErrorInvalidValue", "invalid argument"},
    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {"cudaErrorMemoryAllocation", "out of memory"},
    {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {"cudaErrorInitializationError", "initialization error"},
    {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {"cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {"cudaErrorInvalidDevice", "invalid device ordinal"},
    {"cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"},
    {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {"CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {"cudaErrorContextIsDestroyed", "context is destroyed"},
    {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {"cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {"cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {"CUDA_ERROR_NOT_READY", "device not ready"},
    {"cudaErrorNotReady", "device not ready"},
    {"cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {"cudaErrorNotSupported", "operation not supported"},
    {"CUDA_ERROR_UNKNOWN", "unknown error"},
    {"cudaErrorUnknown", "unknown error"},
    {"CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
    {"CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {"CUBLAS_STATUS_INVALID_VALUE", "an invalid numeric value was used as an argument"},
    {"CUBLAS_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required"},
    {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
    {"CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
    {"NVML_ERROR_UNINITIALIZED", "Uninitialized"},
    {"NVML_ERROR_INVALID_ARGUMENT", "Invalid Argument"},
    {"NVML_ERROR_NOT_SUPPORTED", "Not Supported"},
    {"NVML_ERROR_NO_PERMISSION", "Insufficient Permissions"},
    {"NVML_ERROR_NOT_FOUND", "Not Found"},
    {"NVML_ERROR_INSUFFICIENT_SIZE", "Insufficient Size"},
    {"NVML_ERROR_DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {"NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "Argument version mismatch"},
    {"NVML_ERROR_UNKNOWN", "Unknown Error"},
};

static const char *text_of(const char *name, const char *generic)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < N(texts); i++)
        if (strcmp(texts[i].name, name) == 0)
            return texts[i].text;
    return generic;
}

const char *sim_cu_name(CUresult r) { return lookup(cu_table, N(cu_table), (int)r); }
const char *sim_cu_string(CUresult r) { return text_of(sim_cu_name(r), "simulated CUDA driver error"); }
const char *sim_rt_name(cudaError_t e) { return lookup(rt_table, N(rt_table), (int)e); }
const char *sim_rt_string(cudaError_t e) { return text_of(sim_rt_name(e), "simulated CUDA runtime error"); }
const char *sim_blas_name(cublasStatus_t s) { return lookup(blas_table, N(blas_table), (int)s); }
const char *sim_blas_string(cublasStatus_t s) { return text_of(sim_blas_name(s), "simulated cuBLAS error"); }
const char *sim_nvml_name(nvmlReturn_t r) { return lookup(nvml_table, N(nvml_table), r); }
const char *sim_nvml_string(nvmlReturn_t r) { return text_of(sim_nvml_name(r), "Simulated NVML error"); }

int sim_code_of_name(const char *name, int *code)
{
    const struct {
        const entry *t;
        size_t n;
    } tables[] = {{cu_table, N(cu_table)}, {rt_table, N(rt_table)},
                  {blas_table, N(blas_table)}, {nvml_table, N(nvml_table)}};
    for (size_t k = 0; k < N(tables); k++)
        for (size_t i = 0; i < tables[k].n; i++)
            if (strcmp(tables[k].t[i].name, name) == 0) {
                *code = tables[k].t[i].code;
                return 0;
            }
    return -1;
}

int sim_rt_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
        return 1;
    default:
        return 0;
    }
}

static const struct {
    CUresult cu;
    cudaError_t rt;
} pairs[] = {
    {CUDA_SUCCESS, cudaSuccess},
    {CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue},
    {CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation},
    {CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError},
    {CUDA_ERROR_DEINITIALIZED, cudaErrorCudartUnloading},
    {CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice},
    {CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice},
    {CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, cudaErrorContextIsDestroyed},
    {CUDA_ERROR_ILLEGAL_ADDRESS, cudaErrorIllegalAddress},
    {CUDA_ERROR_LAUNCH_FAILED, cudaErrorLaunchFailure},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, cudaErrorHardwareStackError},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, cudaErrorIllegalInstruction},
    {CUDA_ERROR_MISALIGNED_ADDRESS, cudaErrorMisalignedAddress},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, cudaErrorInvalidAddressSpace},
    {CUDA_ERROR_INVALID_PC, cudaErrorInvalidPc},
    {CUDA_ERROR_LAUNCH_TIMEOUT, cudaErrorLaunchTimeout},
    {CUDA_ERROR_ASSERT, cudaErrorAssert},
    {CUDA_ERROR_ECC_UNCORRECTABLE, cudaErrorECCUncorrectable},
    {CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle},
    {CUDA_ERROR_NOT_READY, cudaErrorNotReady},
    {CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported},
    {CUDA_ERROR_NOT_PERMITTED, cudaErrorNotPermitted},
    {CUDA_ERROR_OPERATING_SYSTEM, cudaErrorOperatingSystem},
    {CUDA_ERROR_SYSTEM_NOT_READY, cudaErrorSystemNotReady},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, cudaErrorSystemDriverMismatch},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, cudaErrorCompatNotSupportedOnDevice},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, cudaErrorDevicesUnavailable},
    {CUDA_ERROR_STUB_LIBRARY, cudaErrorStubLibrary},
    {CUDA_ERROR_UNKNOWN, cudaErrorUnknown},
};

cudaError_t sim_rt_from_cu(CUresult r)
{
    for (size_t i = 0; i < N(pairs); i++)
        if (pairs[i].cu == r)
            return pairs[i].rt;
    return cudaErrorUnknown;
}

CUresult sim_cu_from_rt(cudaError_t e)
{
    for (size_t i = 0; i < N(pairs); i++)
        if (pairs[i].rt == e)
            return pairs[i].cu;
    return CUDA_ERROR_UNKNOWN;
}
