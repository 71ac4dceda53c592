/*
 * fakelib.c - shared libraries that load but are not the library they are
 * named after, for tests/test_loader.c (built by tests/fakelib.cmake).
 *
 * FAKE_OPENBLAS_NOOP builds an OpenBLAS whose gemm calls return without
 * computing anything: the negative control of the timed matmul, whose
 * verification must catch it. It counts its gemm calls
 * (fake_openblas_gemm_calls). Its build configuration text and core name
 * can be set (fake_openblas_set_config, fake_openblas_set_corename). It exports the thread pool's count
 * (blas_num_threads) but not whether the pool runs (blas_server_avail):
 * the library reads the two together or not at all.
 *
 * FAKE_NVML builds a libnvidia-ml.so.1 for tests/test_nvml.c's loader
 * cases: nvmlInit_v2 returns the number in FAKE_NVML_INIT_RESULT (0,
 * NVML_SUCCESS, when unset), nvmlShutdown succeeds, nvmlErrorString says
 * "fake NVML error N"; every query is a stub that fails.
 *
 * FAKE_GPUPROBE builds a libgpuprobe.so.1 for the Python package's
 * version check (python/tests): gpuprobe_version() and
 * gpuprobe_version_string() report FAKE_GPUPROBE_VERSION (MAJOR * 10000 +
 * MINOR * 100 + PATCH; 1.0.3 when unset), and nothing else is there.
 *
 * One build per library, chosen with FAKE_CUDART (libcudart.so.N),
 * FAKE_CUDA (libcuda.so.1), FAKE_NVML or FAKE_OPENBLAS (libopenblas.so.0), defines
 * every function libgpuprobe looks up as a stub that fails. A build that
 * must lack a function renames it on the command line
 * (-Dname=name_absent): the library still loads, but dlsym() cannot find
 * that name. Only cudaRuntimeGetVersion gives an answer (12.4); the
 * driver's stubs fail, so a loader that accepts the library goes on to
 * report a cuInit failure.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */

#define FAKE_FAIL 999

#if defined(FAKE_OPENBLAS_NOOP)
static long gemm_calls[2]; /* counted: sgemm, dgemm */
/* The signatures of cblas.h, whose enums are ints. */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc);
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc)
{
    (void)order, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha;
    (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
    gemm_calls[0]++;
}
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta,
                 double *c, int ldc);
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta,
                 double *c, int ldc)
{
    (void)order, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha;
    (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
    gemm_calls[1]++;
}
/* The gemm calls made so far: sgemm (dp 0) or dgemm (dp 1). */
long fake_openblas_gemm_calls(int dp);
long fake_openblas_gemm_calls(int dp) { return gemm_calls[dp != 0]; }
static int threads = 1;
int openblas_get_num_threads(void);
int openblas_get_num_threads(void) { return threads; }
void openblas_set_num_threads(int n);
void openblas_set_num_threads(int n) { threads = n; }
/* The core name it reports: set by tests (NULL: none). */
static const char *corename = "Noop";
void fake_openblas_set_corename(const char *text);
void fake_openblas_set_corename(const char *text) { corename = text; }
char *openblas_get_corename(void);
char *openblas_get_corename(void) { return (char *)corename; }
/* The build configuration it reports: set by tests (NULL: none). */
static const char *config = "OpenBLAS 0.0.0 FAKE";
void fake_openblas_set_config(const char *text);
void fake_openblas_set_config(const char *text) { config = text; }
char *openblas_get_config(void);
char *openblas_get_config(void) { return (char *)config; }
extern int blas_num_threads;
int blas_num_threads = 4;
#define STUBS
#elif defined(FAKE_CUDART)
int cudaRuntimeGetVersion(int *version);
int cudaRuntimeGetVersion(int *version)
{
    *version = 12040;
    return 0;
}
#define STUBS                                                                 \
    X(cudaDriverGetVersion) X(cudaGetDeviceCount) X(cudaGetErrorName)         \
    X(cudaGetErrorString) X(cudaGetLastError) X(cudaDeviceGetAttribute)       \
    X(cudaDeviceGetPCIBusId) X(cudaMemGetInfo) X(cudaMalloc) X(cudaFree)      \
    X(cudaMallocHost) X(cudaFreeHost) X(cudaMemcpyAsync) X(cudaMemsetAsync)   \
    X(cudaStreamCreateWithFlags) X(cudaStreamDestroy)                         \
    X(cudaStreamSynchronize) X(cudaEventCreate) X(cudaEventRecord)            \
    X(cudaEventSynchronize) X(cudaEventElapsedTime) X(cudaEventDestroy)
#elif defined(FAKE_CUDA)
#define STUBS                                                                 \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet)        \
    X(cuDeviceGetName) X(cuDeviceGetUuid) X(cuDeviceGetUuid_v2)               \
    X(cuDeviceTotalMem_v2) X(cuDeviceGetAttribute)                            \
    X(cuDevicePrimaryCtxGetState) X(cuGetErrorName)                           \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease_v2)               \
    X(cuCtxPushCurrent_v2) X(cuCtxPopCurrent_v2) X(cuMemGetInfo_v2)
#elif defined(FAKE_NVML)
#include <stdio.h>
#include <stdlib.h>
int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
    const char *r = getenv("FAKE_NVML_INIT_RESULT");
    return r ? atoi(r) : 0;
}
int nvmlShutdown(void);
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc);
const char *nvmlErrorString(int rc)
{
    static char text[48];
    snprintf(text, sizeof text, "fake NVML error %d", rc);
    return text;
}
#define STUBS                                                                 \
    X(nvmlDeviceGetCount_v2) X(nvmlDeviceGetHandleByIndex_v2)                 \
    X(nvmlDeviceGetHandleByUUID) X(nvmlDeviceGetHandleByPciBusId_v2)          \
    X(nvmlDeviceGetUUID) X(nvmlDeviceGetIndex) X(nvmlDeviceGetMemoryInfo)     \
    X(nvmlDeviceGetMemoryInfo_v2) X(nvmlDeviceGetMigMode)                     \
    X(nvmlDeviceIsMigDeviceHandle)                                            \
    X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle)                           \
    X(nvmlDeviceGetMaxMigDeviceCount) X(nvmlDeviceGetMigDeviceHandleByIndex)  \
    X(nvmlDeviceGetUtilizationRates) X(nvmlDeviceGetTemperature)              \
    X(nvmlDeviceGetPowerUsage) X(nvmlDeviceGetEnforcedPowerLimit)             \
    X(nvmlDeviceGetComputeRunningProcesses_v3)                                \
    X(nvmlDeviceGetComputeRunningProcesses_v2)                                \
    X(nvmlDeviceGetComputeRunningProcesses)                                   \
    X(nvmlDeviceGetGraphicsRunningProcesses_v3)                               \
    X(nvmlDeviceGetGraphicsRunningProcesses)                                  \
    X(nvmlDeviceGetCurrPcieLinkGeneration) X(nvmlDeviceGetCurrPcieLinkWidth)  \
    X(nvmlDeviceGetMaxPcieLinkGeneration) X(nvmlDeviceGetMaxPcieLinkWidth)
#elif defined(FAKE_GPUPROBE)
#ifndef FAKE_GPUPROBE_VERSION
#define FAKE_GPUPROBE_VERSION 10003
#endif
#include <stdio.h>
unsigned gpuprobe_version(void);
unsigned gpuprobe_version(void) { return FAKE_GPUPROBE_VERSION; }
const char *gpuprobe_version_string(void);
const char *gpuprobe_version_string(void)
{
    static char text[32];
    snprintf(text, sizeof text, "%u.%u.%u", FAKE_GPUPROBE_VERSION / 10000u,
             FAKE_GPUPROBE_VERSION / 100u % 100u, FAKE_GPUPROBE_VERSION % 100u);
    return text;
}
#define STUBS
#elif defined(FAKE_OPENBLAS)
#define STUBS                                                                 \
    X(cblas_sgemm) X(cblas_dgemm) X(openblas_get_num_threads)                 \
    X(openblas_set_num_threads) X(openblas_get_corename)                      \
    X(openblas_get_config)
#else
#error "define FAKE_CUDART, FAKE_CUDA, FAKE_NVML, FAKE_OPENBLAS, FAKE_OPENBLAS_NOOP or FAKE_GPUPROBE"
#endif

#define X(name)                                                               \
    int name(void);                                                           \
    int name(void) { return FAKE_FAIL; }
STUBS
