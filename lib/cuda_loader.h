/*
 * cuda_loader.h - the CUDA state the CUDA files share (cuda_loader.c,
 * cuda_device.c, cuda_matmul.c, cuda_bandwidth.c; included by nothing else): the libraries
 * opened with dlopen and the functions looked up in them. libgpuprobe
 * never links a CUDA library: the CUDA headers are used for types and enum
 * values only, and every function is looked up with dlsym by the name the
 * headers expand it to (e.g. cuDeviceTotalMem -> cuDeviceTotalMem_v2,
 * cublasCreate -> cublasCreate_v2). What the rest of the library calls is
 * declared in internal.h, typed without CUDA; no_cuda.c stands in for it
 * in a build without CUDA.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CUDA_LOADER_H
#define GPUPROBE_CUDA_LOADER_H

#ifndef GPUPROBE_HAVE_CUDA
#error "cuda_loader.h belongs to the CUDA files of a build with CUDA support"
#endif

#include "internal.h"
#include "nvml.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <library_types.h>
#include <cublas_api.h>


typedef struct gp_cuda {
    void *rt_lib;      /* libcudart.so.N */
    void *drv_lib;     /* libcuda.so.1 */
    void *blas_lib;    /* libcublas.so.N, loaded by gp_cuda_load_cublas() */
    int rt_major;      /* N of the libcudart.so.N that was loaded */
    char rt_name[GP_PATH_LEN + 32]; /* what was passed to dlopen for it */
    /* Set once the library has been initialised (cudaGetDeviceCount,
     * cuInit): gp_cuda_unload() then leaves it mapped, since unloading an
     * initialised CUDA library under its own threads is unsafe. */
    int rt_initialized;
    int drv_initialized;
    int blas_initialized;   /* set by the matmul and bandwidth code after cublasCreate */
    /* NVML (optional, lib/nvml.h): loaded once enumeration has found
     * CUDA devices, and by the cause decision; shut down at unload. */
    gp_nvml nvml;

    struct {
        cudaError_t (*RuntimeGetVersion)(int *);
        cudaError_t (*DriverGetVersion)(int *);
        cudaError_t (*GetDeviceCount)(int *);
        const char *(*GetErrorName)(cudaError_t);
        const char *(*GetErrorString)(cudaError_t);
        cudaError_t (*GetLastError)(void);
        cudaError_t (*DeviceGetAttribute)(int *, enum cudaDeviceAttr, int);
        cudaError_t (*DeviceGetPCIBusId)(char *, int, int);
        cudaError_t (*MemGetInfo)(size_t *, size_t *);
        cudaError_t (*Malloc)(void **, size_t);
        cudaError_t (*Free)(void *);
        cudaError_t (*MallocHost)(void **, size_t);
        cudaError_t (*FreeHost)(void *);
        cudaError_t (*MemcpyAsync)(void *, const void *, size_t,
                                   enum cudaMemcpyKind, cudaStream_t);
        cudaError_t (*MemsetAsync)(void *, int, size_t, cudaStream_t);
        cudaError_t (*StreamCreateWithFlags)(cudaStream_t *, unsigned int);
        cudaError_t (*StreamDestroy)(cudaStream_t);
        cudaError_t (*StreamSynchronize)(cudaStream_t);
        cudaError_t (*EventCreate)(cudaEvent_t *);
        cudaError_t (*EventRecord)(cudaEvent_t, cudaStream_t);
        cudaError_t (*EventSynchronize)(cudaEvent_t);
        cudaError_t (*EventElapsedTime)(float *, cudaEvent_t, cudaEvent_t);
        cudaError_t (*EventDestroy)(cudaEvent_t);
    } rt;
    struct {
        CUresult (*Init)(unsigned int);
        CUresult (*DriverGetVersion)(int *);
        CUresult (*DeviceGetCount)(int *);
        CUresult (*DeviceGet)(CUdevice *, int);
        CUresult (*DeviceGetName)(char *, int, CUdevice);
        CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);          /* cuDeviceGetUuid_v2 */
        CUresult (*DeviceTotalMem)(size_t *, CUdevice);         /* cuDeviceTotalMem_v2 */
        CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
        CUresult (*DevicePrimaryCtxGetState)(CUdevice, unsigned int *, int *);
        CUresult (*GetErrorName)(CUresult, const char **);
    } drv;
    struct {
        cublasStatus_t (*Create)(cublasHandle_t *);             /* cublasCreate_v2 */
        cublasStatus_t (*Destroy)(cublasHandle_t);              /* cublasDestroy_v2 */
        cublasStatus_t (*SetStream)(cublasHandle_t, cudaStream_t); /* cublasSetStream_v2 */
        cublasStatus_t (*SetMathMode)(cublasHandle_t, cublasMath_t);
        cublasStatus_t (*GetVersion)(cublasHandle_t, int *);    /* cublasGetVersion_v2 */
        const char *(*GetStatusName)(cublasStatus_t);           /* may be NULL (old cuBLAS) */
        cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t,
                                 cublasOperation_t, int, int, int,
                                 const void *, const void *, cudaDataType, int,
                                 const void *, cudaDataType, int, const void *,
                                 void *, cudaDataType, int, cublasComputeType_t,
                                 cublasGemmAlgo_t);
        /* The bandwidth measurement's read (cuda_bandwidth.c). */
        cublasStatus_t (*Sdot)(cublasHandle_t, int, const float *, int, const float *, int,
                               float *);                        /* cublasSdot_v2 */
        cublasStatus_t (*SetPointerMode)(cublasHandle_t, cublasPointerMode_t); /* ..._v2 */
    } blas;
    /* Driver calls of cuda_device.c (context entry, the memory fallback): the primary
     * context is retained and pushed/popped, so the calling thread's current
     * device and context are left exactly as they were. */
    struct {
        CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
        CUresult (*PrimaryCtxRelease)(CUdevice);      /* cuDevicePrimaryCtxRelease_v2 */
        CUresult (*CtxPushCurrent)(CUcontext);        /* cuCtxPushCurrent_v2 */
        CUresult (*CtxPopCurrent)(CUcontext *);       /* cuCtxPopCurrent_v2 */
        CUresult (*MemGetInfo)(size_t *, size_t *);   /* cuMemGetInfo_v2 */
    } drvctx;
    /* Primary contexts retained by memory queries; released by
     * gp_cuda_unload() (i.e. when the gpuprobe context is destroyed). */
    CUdevice *retained;
    size_t nretained;
} gp_cuda;

/* Load cuBLAS matching the loaded runtime (internal.h) is
 * gp_cuda_load_cublas(); the helpers below are for the CUDA files. */

/* "cudaErrorMemoryAllocation"-style name of a runtime error (never NULL). */
const char *gp_cuda_rt_error_name(const gp_cuda *cuda, cudaError_t err);
/* The driver's name of r (cuGetErrorName), or "unrecognized CUDA driver
 * error" when the driver has none, gives none or gives "". Never NULL. */
const char *gp_cuda_drv_error_name(const gp_cuda *cuda, CUresult r);
/* Name of a cuBLAS status, e.g. "CUBLAS_STATUS_ALLOC_FAILED" (never NULL). */
const char *gp_cublas_status_name(const gp_cuda *cuda, cublasStatus_t st);
/* Fail with a runtime call's error: "<call> failed: cudaError...",
 * GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY for cudaErrorMemoryAllocation and
 * GPUPROBE_ERR_CUDA otherwise; a non-sticky error is cleared first. */
gpuprobe_status gp_cuda_rt_fail(gpuprobe_context *ctx, const char *call, cudaError_t e);
/* The same for a cuBLAS call: DEVICE_OUT_OF_MEMORY for ALLOC_FAILED,
 * UNSUPPORTED for NOT_SUPPORTED and ARCH_MISMATCH, else GPUPROBE_ERR_CUDA. */
gpuprobe_status gp_cublas_fail(gpuprobe_context *ctx, const char *call, cublasStatus_t s);
/* Fail with a driver call's error on a device: "cuX on cuda:N (name)
 * failed with CUDA_ERROR_...", DEVICE_OUT_OF_MEMORY for
 * CUDA_ERROR_OUT_OF_MEMORY and GPUPROBE_ERR_CUDA otherwise. */
gpuprobe_status gp_cuda_drv_fail(gpuprobe_context *ctx, const gp_device *dev,
                                 const char *call, CUresult r);

#endif
