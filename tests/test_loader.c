/*
 * test_loader.c - libraries that load but are not what libgpuprobe needs,
 * and a driver library that exists but cannot be loaded.
 *
 * - A CUDA runtime or driver lacking one required function: the cause is
 *   "other" and names the function; the CPU keeps working.
 * - A driver with only the unversioned cuDeviceGetUuid is accepted (older
 *   drivers); one with neither name is not.
 * - A complete runtime and driver: every function pointer is bound to the
 *   library's own symbol of the expected name.
 * - A libcuda.so.1 that exists but is not loadable here (a 32-bit ELF
 *   file, a file too short to be one): "no driver", with the system
 *   loader's reason; a missing one: "no driver" and nothing more.
 * - The names of CUDA errors and cuBLAS statuses: the library's own,
 *   however short; the fallback for none or an empty one.
 * - An OpenBLAS lacking any of its functions: UNSUPPORTED naming it, the
 *   library not kept loaded, nothing else broken; the real OpenBLAS: every
 *   pointer bound; the name made from its configuration and core.
 *
 * The fake libraries are built by tests/fakelib.cmake into GP_FAKELIB_DIR.
 * The runtime is found through GPUPROBE_CUDA_LIBDIR as users point it;
 * libcuda.so.1 and libopenblas.so.0, always opened by SONAME, are
 * redirected through the gp_test_dlopen seam. An empty sysroot keeps the
 * machine's /proc and /dev out of the decisions.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "cpu_blas.h"
#ifdef GPUPROBE_HAVE_CUDA
#include "cuda_loader.h"
#endif
#include "sysroot_util.h"

#include "fakelib_dir.h" /* GP_FAKELIB_DIR, found where the build is */

/* ---- the seam: where libcuda.so.1 and libopenblas.so.0 come from ----
 * NVML never comes from the machine: where it answers (a GPU machine, or
 * the simulated stack on the loader's path), the library takes a failed
 * cuInit for something other than a missing kernel driver, which these
 * tests are not about. It is looked for in the empty sysroot instead. */

static char root[64]; /* an empty sysroot */
static char cuda_path[GP_PATH_LEN];     /* "" = the system's */
static char openblas_path[GP_PATH_LEN]; /* "" = the system's */
static size_t cuda_opens;

static void *redirect_dlopen(const char *file, int mode)
{
    if (strcmp(file, "libcuda.so.1") == 0) {
        cuda_opens++;
        if (cuda_path[0])
            return dlopen(cuda_path, mode);
    }
    if (strcmp(file, "libopenblas.so.0") == 0 && openblas_path[0])
        return dlopen(openblas_path, mode);
    if (strcmp(file, "libnvidia-ml.so.1") == 0) {
        char absent[GP_PATH_LEN];
        snprintf(absent, sizeof absent, "%s/libnvidia-ml.so.1", root);
        return dlopen(absent, mode);
    }
    return dlopen(file, mode);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    strcpy(root, "/tmp/gpuprobe-loader-XXXXXX");
    assert_non_null(mkdtemp(root));
    cuda_path[0] = openblas_path[0] = '\0';
    cuda_opens = 0;
    gp_test_dlopen = redirect_dlopen;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gp_test_dlopen = NULL;
    sr_rm_tree(root);
    return 0;
}

#ifdef GPUPROBE_HAVE_CUDA /* the helpers of the CUDA cases */
/* A context whose runtime comes from GP_FAKELIB_DIR/<runtime> and whose
 * libcuda.so.1 is `driver` (a path; NULL: GP_FAKELIB_DIR/<driver_dir>). */
static gpuprobe_context *ctx_with(const char *runtime, const char *driver_dir,
                                  const char *driver)
{
    char libdir[GP_PATH_LEN];
    snprintf(libdir, sizeof libdir, "%s/%s", GP_FAKELIB_DIR, runtime);
    if (driver)
        snprintf(cuda_path, sizeof cuda_path, "%s", driver);
    else
        snprintf(cuda_path, sizeof cuda_path, "%s/%s/libcuda.so.1", GP_FAKELIB_DIR,
                 driver_dir);
    assert_int_equal(setenv("GPUPROBE_CUDA_LIBDIR", libdir, 1), 0);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    gp_test_set_sysroot(ctx, root);
    return ctx;
}

static gpuprobe_cuda_cause cause_of(gpuprobe_context *ctx, const char **detail)
{
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)-1;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, detail), GPUPROBE_OK);
    assert_non_null(*detail);
    return cause;
}

static void assert_cause(gpuprobe_context *ctx, gpuprobe_cuda_cause want,
                         const char *detail_want)
{
    const char *detail = NULL;
    gpuprobe_cuda_cause cause = cause_of(ctx, &detail);
    if (cause != want || strcmp(detail, detail_want) != 0)
        fail_msg("cause %s \"%s\", want %s \"%s\"", gpuprobe_cuda_cause_name(cause),
                 detail, gpuprobe_cuda_cause_name(want), detail_want);
}

/* The CPU is still device 0 and the only one; auto selects it. */
static void assert_cpu_only(gpuprobe_context *ctx)
{
    size_t n = 0, dev = 99;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, NULL),
                     GPUPROBE_OK);
    assert_int_equal(dev, 0);
}
#endif

static void *field_ptr(const void *base, size_t off)
{
    void *p;
    memcpy(&p, (const char *)base + off, sizeof p);
    return p;
}

/* Every listed field of *base holds dlsym(lib, name). */
typedef struct bound {
    size_t off;
    const char *name;
} bound;

static void assert_bound(const void *base, void *lib, const bound *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *want = dlsym(lib, b[i].name);
        assert_non_null(want);
        if (field_ptr(base, b[i].off) != want)
            fail_msg("%s is not bound to the library's symbol", b[i].name);
    }
}

#ifdef GPUPROBE_HAVE_CUDA

#define F(member, name) {offsetof(gp_cuda, member), name}
static const bound rt_bound[] = {
    F(rt.RuntimeGetVersion, "cudaRuntimeGetVersion"),
    F(rt.DriverGetVersion, "cudaDriverGetVersion"),
    F(rt.GetDeviceCount, "cudaGetDeviceCount"),
    F(rt.GetErrorName, "cudaGetErrorName"),
    F(rt.GetErrorString, "cudaGetErrorString"),
    F(rt.GetLastError, "cudaGetLastError"),
    F(rt.DeviceGetAttribute, "cudaDeviceGetAttribute"),
    F(rt.DeviceGetPCIBusId, "cudaDeviceGetPCIBusId"),
    F(rt.MemGetInfo, "cudaMemGetInfo"),
    F(rt.Malloc, "cudaMalloc"),
    F(rt.Free, "cudaFree"),
    F(rt.MallocHost, "cudaMallocHost"),
    F(rt.FreeHost, "cudaFreeHost"),
    F(rt.MemcpyAsync, "cudaMemcpyAsync"),
    F(rt.MemsetAsync, "cudaMemsetAsync"),
    F(rt.StreamCreateWithFlags, "cudaStreamCreateWithFlags"),
    F(rt.StreamDestroy, "cudaStreamDestroy"),
    F(rt.StreamSynchronize, "cudaStreamSynchronize"),
    F(rt.EventCreate, "cudaEventCreate"),
    F(rt.EventRecord, "cudaEventRecord"),
    F(rt.EventSynchronize, "cudaEventSynchronize"),
    F(rt.EventElapsedTime, "cudaEventElapsedTime"),
    F(rt.EventDestroy, "cudaEventDestroy"),
};
static const bound drv_bound[] = {
    F(drv.Init, "cuInit"),
    F(drv.DriverGetVersion, "cuDriverGetVersion"),
    F(drv.DeviceGetCount, "cuDeviceGetCount"),
    F(drv.DeviceGet, "cuDeviceGet"),
    F(drv.DeviceGetName, "cuDeviceGetName"),
    F(drv.DeviceGetUuid, "cuDeviceGetUuid_v2"),
    F(drv.DeviceTotalMem, "cuDeviceTotalMem_v2"),
    F(drv.DeviceGetAttribute, "cuDeviceGetAttribute"),
    F(drv.DevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState"),
    F(drv.GetErrorName, "cuGetErrorName"),
    F(drvctx.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    F(drvctx.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    F(drvctx.CtxPushCurrent, "cuCtxPushCurrent_v2"),
    F(drvctx.CtxPopCurrent, "cuCtxPopCurrent_v2"),
    F(drvctx.MemGetInfo, "cuMemGetInfo_v2"),
};
#undef F

/* What a driver that loads but whose cuInit fails says here (the sysroot
 * has no /proc/driver/nvidia/version). */
static const char cuinit_failed[] =
    "libcuda.so.1 is installed, but "
    "/proc/driver/nvidia/version is missing (cuInit failed with unrecognized "
    "CUDA driver error)";

static void runtime_lacks_function(void **state)
{
    (void)state;
    gpuprobe_context *ctx = ctx_with("cudart-no-memgetinfo", "cuda", NULL);
    char want[GP_PATH_LEN + 64];
    snprintf(want, sizeof want, "%s/cudart-no-memgetinfo/libcudart.so.12 lacks the "
             "function cudaMemGetInfo", GP_FAKELIB_DIR);
    assert_cause(ctx, GPUPROBE_CUDA_OTHER, want);
    assert_int_equal(cuda_opens, 0); /* the driver is not even looked for */
    int v = -7;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(v, -7);
    assert_cpu_only(ctx);
    gpuprobe_context_destroy(ctx);
}

static void driver_lacks_function(void **state)
{
    (void)state;
    gpuprobe_context *ctx = ctx_with("cudart", "cuda-no-memgetinfo", NULL);
    assert_cause(ctx, GPUPROBE_CUDA_OTHER, "libcuda.so.1 lacks the function cuMemGetInfo_v2");
    int v = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 12040);
    assert_cpu_only(ctx);
    gpuprobe_context_destroy(ctx);

    ctx = ctx_with("cudart", "cuda-no-uuid", NULL);
    assert_cause(ctx, GPUPROBE_CUDA_OTHER, "libcuda.so.1 lacks the function cuDeviceGetUuid_v2");
    gpuprobe_context_destroy(ctx);
}

/* Older drivers have only cuDeviceGetUuid, with the same signature. */
static void driver_old_uuid(void **state)
{
    (void)state;
    gpuprobe_context *ctx = ctx_with("cudart", "cuda-old-uuid", NULL);
    assert_cause(ctx, GPUPROBE_CUDA_NO_KERNEL_DRIVER, cuinit_failed);
    gp_cuda *c = ctx->cuda;
    assert_non_null(c);
    void *want = dlsym(c->drv_lib, "cuDeviceGetUuid");
    assert_non_null(want);
    assert_true(field_ptr(c, offsetof(gp_cuda, drv.DeviceGetUuid)) == want);
    gpuprobe_context_destroy(ctx);
}

static void complete_libraries_bound(void **state)
{
    (void)state;
    gpuprobe_context *ctx = ctx_with("cudart", "cuda", NULL);
    assert_cause(ctx, GPUPROBE_CUDA_NO_KERNEL_DRIVER, cuinit_failed);
    gp_cuda *c = ctx->cuda;
    assert_non_null(c);
    assert_bound(c, c->rt_lib, rt_bound, sizeof rt_bound / sizeof rt_bound[0]);
    assert_bound(c, c->drv_lib, drv_bound, sizeof drv_bound / sizeof drv_bound[0]);
    int v = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 12040);
    /* the driver's version call failed: unknown, not made up */
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &v), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_cpu_only(ctx);
    gpuprobe_context_destroy(ctx);
}

/* libcuda.so.1 exists but cannot be loaded: the loader's reason is given. */
static void driver_not_loadable(void **state)
{
    (void)state;
    char path[GP_PATH_LEN];
    snprintf(path, sizeof path, "%s/libcuda.so.1", root);

    /* A 32-bit ELF header. */
    static const unsigned char elf32[64] = {0x7f, 'E', 'L', 'F', 1, 1, 1};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(elf32, 1, sizeof elf32, f), sizeof elf32);
    fclose(f);
    gpuprobe_context *ctx = ctx_with("cudart", NULL, path);
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_DRIVER);
    static const char head[] = "libcuda.so.1 was not found by the system loader (";
    if (strncmp(detail, head, sizeof head - 1) != 0 ||
        !strstr(detail, "wrong ELF class: ELFCLASS32") ||
        detail[strlen(detail) - 1] != ')')
        fail_msg("detail \"%s\"", detail);
    int v = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 12040);
    assert_cpu_only(ctx);
    gpuprobe_context_destroy(ctx);

    /* Too short to be an ELF file. */
    sr_put(root, "libcuda.so.1", "not a library\n");
    ctx = ctx_with("cudart", NULL, path);
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_DRIVER);
    if (strncmp(detail, head, sizeof head - 1) != 0 || !strstr(detail, path))
        fail_msg("detail \"%s\"", detail);
    gpuprobe_context_destroy(ctx);

    /* Not there at all: nothing to add to "not found". */
    snprintf(path, sizeof path, "%s/none/libcuda.so.1", root);
    ctx = ctx_with("cudart", NULL, path);
    assert_cause(ctx, GPUPROBE_CUDA_NO_DRIVER,
                 "libcuda.so.1 was not found by the system loader");
    assert_true(cuda_opens >= 1);
    gpuprobe_context_destroy(ctx);
}

/* The names of errors and statuses: whatever the library calls its code,
 * however short, is used; no name, or an empty one, gets the fallback
 * (which for cudaSuccess is still its name). The libraries' functions are
 * replaced in a loader state that no library backs. */
static const char *given_name;

static const char *fake_rt_name(cudaError_t e)
{
    (void)e;
    return given_name;
}

static CUresult fake_drv_name(CUresult r, const char **s)
{
    (void)r;
    *s = given_name;
    return CUDA_SUCCESS;
}

static const char *fake_blas_name(cublasStatus_t st)
{
    (void)st;
    return given_name;
}

static void error_names_as_given(void **state)
{
    (void)state;
    gp_cuda *c = calloc(1, sizeof *c);
    assert_non_null(c);
    static int lib;
    c->rt_lib = c->blas_lib = &lib; /* "loaded", never closed */
    c->rt.GetErrorName = fake_rt_name;
    c->drv.GetErrorName = fake_drv_name;
    c->blas.GetStatusName = fake_blas_name;

    static const char *const names[] = {"cudaErrorInvalidValue", "E", "ab"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        given_name = names[i];
        assert_string_equal(gp_cuda_rt_error_name(c, cudaErrorInvalidValue), names[i]);
        assert_string_equal(gp_cuda_drv_error_name(c, CUDA_ERROR_INVALID_VALUE), names[i]);
        assert_string_equal(gp_cublas_status_name(c, CUBLAS_STATUS_INVALID_VALUE), names[i]);
    }

    static const char *const none[] = {"", NULL};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        given_name = none[i];
        assert_string_equal(gp_cuda_rt_error_name(c, cudaErrorInvalidValue),
                            "unrecognized CUDA runtime error");
        assert_string_equal(gp_cuda_rt_error_name(c, cudaSuccess), "cudaSuccess");
        assert_string_equal(gp_cuda_drv_error_name(c, CUDA_ERROR_INVALID_VALUE),
                            "unrecognized CUDA driver error");
        assert_string_equal(gp_cublas_status_name(c, CUBLAS_STATUS_INVALID_VALUE),
                            "CUBLAS_STATUS_INVALID_VALUE");
    }

    /* Without the libraries, the functions are not called. */
    given_name = "E";
    c->rt_lib = c->blas_lib = NULL;
    assert_string_equal(gp_cuda_rt_error_name(c, cudaErrorInvalidValue),
                        "unrecognized CUDA runtime error");
    assert_string_equal(gp_cublas_status_name(c, CUBLAS_STATUS_INVALID_VALUE),
                        "CUBLAS_STATUS_INVALID_VALUE");
    c->drv.GetErrorName = NULL;
    assert_string_equal(gp_cuda_drv_error_name(c, CUDA_ERROR_INVALID_VALUE),
                        "unrecognized CUDA driver error");
    free(c);
}

#else /* no CUDA in this build: nothing is loaded */

static void runtime_lacks_function(void **state) { (void)state; skip(); }
static void driver_lacks_function(void **state) { (void)state; skip(); }
static void driver_old_uuid(void **state) { (void)state; skip(); }
static void complete_libraries_bound(void **state) { (void)state; skip(); }
static void driver_not_loadable(void **state) { (void)state; skip(); }
static void error_names_as_given(void **state) { (void)state; skip(); }

#endif

/* An OpenBLAS lacking any one of the functions libgpuprobe calls is
 * refused, named, and closed again; the rest of the library still works. */
static void openblas_lacks_function(void **state)
{
    (void)state;
    static const char *const fns[] = {"cblas_sgemm", "cblas_dgemm",
                                      "openblas_get_num_threads",
                                      "openblas_set_num_threads",
                                      "openblas_get_corename", "openblas_get_config"};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        snprintf(openblas_path, sizeof openblas_path, "%s/openblas-no-%s/libopenblas.so.0",
                 GP_FAKELIB_DIR, fns[i]);
        gpuprobe_context *ctx = NULL;
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        char want[256];
        snprintf(want, sizeof want, "libopenblas.so.0 has no %s: not an OpenBLAS build "
                 "libgpuprobe can use", fns[i]);
        gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
        gpuprobe_matmul_options *o = NULL;
        assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 8), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
        assert_null(r);
        assert_string_equal(gpuprobe_last_error(ctx), want);
        /* not kept loaded */
        assert_null(dlopen(openblas_path, RTLD_NOW | RTLD_NOLOAD));
        const char *core = "untouched";
        assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core),
                         GPUPROBE_ERR_UNSUPPORTED);
        assert_string_equal(core, "untouched");
        assert_string_equal(gpuprobe_last_error(ctx), want);
        int64_t threads = -7;
        assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &threads),
                         GPUPROBE_ERR_UNSUPPORTED);
        assert_int_equal(threads, -7);
        assert_null(ctx->openblas);
        /* Everything that does not need OpenBLAS works. */
        gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
        assert_int_equal(gpuprobe_device_memory(ctx, 0, &mi, 0), GPUPROBE_OK);
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
    /* Refused again and again: nothing kept, nothing leaked. */
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    const gp_openblas *ob = NULL;
    assert_int_equal(gp_openblas_get(ctx, &ob), GPUPROBE_ERR_UNSUPPORTED);
    struct mallinfo2 before = mallinfo2();
    for (int i = 0; i < 500; i++)
        assert_int_equal(gp_openblas_get(ctx, &ob), GPUPROBE_ERR_UNSUPPORTED);
    struct mallinfo2 after = mallinfo2();
    assert_null(ctx->openblas);
    if (after.uordblks > before.uordblks + 16 * 1024)
        fail_msg("500 refused loads: the heap grew by %zu bytes",
                 after.uordblks - before.uordblks);
    gpuprobe_context_destroy(ctx);
}

/* The negative control: an OpenBLAS whose gemm computes nothing. The
 * output stays as poisoned (NaN), and verification fails in fp32 and
 * fp64, with the figures still reported. Its gemm calls are counted: the
 * warm-up's 3 and the 5 of each of the 2 timed runs, all of the dtype's
 * gemm (sgemm or dgemm), none of the other's. */
static void gemm_that_does_nothing(void **state)
{
    (void)state;
    snprintf(openblas_path, sizeof openblas_path, "%s/openblas-noop/libopenblas.so.0",
             GP_FAKELIB_DIR);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    static const gpuprobe_dtype dts[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_FP64};
    for (size_t i = 0; i < 2; i++) {
        gpuprobe_matmul_options *o = NULL;
        assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 40), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dts[i]),
                         GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 2),
                         GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 2),
                         GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP, 3),
                         GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 5),
                         GPUPROBE_OK);
        /* No search for the steady state: a gemm that does nothing times
         * as noise, and the count of calls below is exact. */
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS, 0),
                         GPUPROBE_OK);
        long before[2] = {0, 0};
        void *h = dlopen(openblas_path, RTLD_NOW | RTLD_NOLOAD);
        if (h) { /* loaded by the first dtype's run */
            long (*calls)(int) = NULL;
            assert_int_equal(gp_dlsym(h, "fake_openblas_gemm_calls", &calls, sizeof calls), 0);
            before[0] = calls(0);
            before[1] = calls(1);
            dlclose(h);
        }
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_VERIFY_FAILED);
        assert_non_null(r);
        h = dlopen(openblas_path, RTLD_NOW | RTLD_NOLOAD);
        assert_non_null(h);
        long (*calls)(int) = NULL;
        assert_int_equal(gp_dlsym(h, "fake_openblas_gemm_calls", &calls, sizeof calls), 0);
        const int dp = dts[i] == GPUPROBE_DTYPE_FP64;
        assert_int_equal(calls(dp) - before[dp], 3 + 2 * 5);
        assert_int_equal(calls(!dp) - before[!dp], 0);
        dlclose(h);
        assert_non_null(strstr(gpuprobe_last_error(ctx), "(NaN) vs tolerance"));
        int64_t verified = 7, runs = 0;
        double err = 0;
        const char *backend = NULL;
        assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_VERIFIED, &verified),
                         GPUPROBE_OK);
        assert_int_equal(verified, 0);
        assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_RUNS, &runs),
                         GPUPROBE_OK);
        assert_int_equal(runs, 2);
        assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_MAX_ERROR, &err),
                         GPUPROBE_OK);
        assert_true(isnan(err));
        assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_BACKEND, &backend),
                         GPUPROBE_OK);
        assert_string_equal(backend, "OpenBLAS 0.0.0 Noop");
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o);
    }
    gpuprobe_context_destroy(ctx);
}

/* The name: OpenBLAS's version from its build configuration (its first
 * two words), then the core selected at run time. */
static const char *fake_config, *fake_core;
static char *config_of(void) { return (char *)fake_config; }
static char *core_of(void) { return (char *)fake_core; }

static void openblas_name(void **state)
{
    (void)state;
    gp_openblas ob;
    memset(&ob, 0, sizeof ob);
    ob.get_config = config_of;
    ob.get_corename = core_of;
    static const struct {
        const char *config, *core, *want;
    } cases[] = {
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64", "Haswell",
         "OpenBLAS 0.3.21 Haswell"},
        {"OpenBLAS 0.3.21", "Zen", "OpenBLAS 0.3.21 Zen"},
        {"OpenBLAS", "Zen", "OpenBLAS Zen"},
        {NULL, "Zen", "OpenBLAS Zen"},
        {"OpenBLAS 0.3.26.dev", NULL, "OpenBLAS 0.3.26.dev unknown-core"},
        {"OpenBLAS 0.3.26", "", "OpenBLAS 0.3.26 unknown-core"},
        /* a build that names itself shorter: its name, nothing of ours */
        {"BL 1 x", "Zen", "BL 1 Zen"},
        {"", "Zen", " Zen"},
        /* a leading blank is the first of the two that end the version */
        {" A B C", "Zen", " A Zen"},
        /* a first "word" longer than the 63 bytes kept */
        {"0123456789012345678901234567890123456789012345678901234567890123456789 x",
         "C", "012345678901234567890123456789012345678901234567890123456789012 C"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_config = cases[i].config;
        fake_core = cases[i].core;
        char out[128];
        memset(out, '#', sizeof out);
        gp_openblas_name(&ob, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
    /* cut by the destination */
    fake_config = "OpenBLAS 0.3.21 DYNAMIC_ARCH";
    fake_core = "Haswell";
    char small[12];
    gp_openblas_name(&ob, small, sizeof small);
    assert_string_equal(small, "OpenBLAS 0.");
}

static void openblas_bound(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    const gp_openblas *ob = NULL;
    assert_int_equal(gp_openblas_get(ctx, &ob), GPUPROBE_OK);
    assert_non_null(ob);
#define F(member, name) {offsetof(gp_openblas, member), name}
    static const bound blas_bound[] = {
        F(sgemm, "cblas_sgemm"),
        F(dgemm, "cblas_dgemm"),
        F(get_num_threads, "openblas_get_num_threads"),
        F(set_num_threads, "openblas_set_num_threads"),
        F(get_corename, "openblas_get_corename"),
        F(get_config, "openblas_get_config"),
    };
#undef F
    assert_bound(ob, ob->lib, blas_bound, sizeof blas_bound / sizeof blas_bound[0]);
    /* the pool's two variables, both or neither */
    const void *threads = dlsym(ob->lib, "blas_num_threads");
    const void *running = dlsym(ob->lib, "blas_server_avail");
    if (threads && running) {
        assert_ptr_equal(ob->pool_threads, threads);
        assert_ptr_equal(ob->pool_running, running);
    } else {
        assert_null(ob->pool_threads);
        assert_null(ob->pool_running);
    }
    /* loaded once per context */
    const gp_openblas *again = NULL;
    assert_int_equal(gp_openblas_get(ctx, &again), GPUPROBE_OK);
    assert_ptr_equal(again, ob);
    gpuprobe_context_destroy(ctx);
}

/* What a run costs in OpenBLAS's threads and buffers, from the table of
 * a (made up) OpenBLAS: the count asked for or in force, capped at the
 * build's MAX_THREADS when it says one; with no pool state known, every
 * thread but the caller may have to start, each with a buffer and a
 * stack; the packed panels never above the buffers. */
static int five_threads(void) { return 5; }

static void openblas_cost(void **state)
{
    (void)state;
    gp_openblas b;
    memset(&b, 0, sizeof b);
    b.get_num_threads = five_threads;
    b.max_threads = 64;
    gp_blas_cost c;
    gp_openblas_cost(&b, 0, 100, 80, 60, 4, &c); /* the count in force */
    assert_int_equal(c.threads, 5);
    assert_int_equal(c.new_threads, 4);
    assert_true(c.address_space >= 5 * GP_OPENBLAS_BUFFER);
    /* panels: 4 bytes x min(1024, k) x (threads x min(1024, n) + m) */
    assert_int_equal(c.memory, UINT64_C(4) * 60 * (5 * 80 + 100));
    gp_openblas_cost(&b, 2, 100, 80, 60, 8, &c); /* asked for */
    assert_int_equal(c.threads, 2);
    assert_int_equal(c.new_threads, 1);
    /* the caller's buffer, and one more thread's buffer and stack */
    assert_true(c.address_space > 2 * GP_OPENBLAS_BUFFER);
    assert_true(c.address_space - 2 * GP_OPENBLAS_BUFFER < (UINT64_C(1) << 30));
    assert_int_equal(c.memory, UINT64_C(8) * 60 * (2 * 80 + 100));
    gp_openblas_cost(&b, 200, 100, 80, 60, 4, &c); /* past MAX_THREADS */
    assert_int_equal(c.threads, 64);
    b.max_threads = 1;
    gp_openblas_cost(&b, 0, 100, 80, 60, 4, &c);
    assert_int_equal(c.threads, 1);
    assert_int_equal(c.new_threads, 0);
    assert_int_equal(c.address_space, GP_OPENBLAS_BUFFER);
    b.max_threads = 0; /* the build did not say */
    gp_openblas_cost(&b, 200, 100, 80, 60, 4, &c);
    assert_int_equal(c.threads, 200);
    /* Big enough that the panels exceed the threads' buffers. */
    b.max_threads = 64;
    gp_openblas_cost(&b, 1, 1 << 20, 4096, 4096, 8, &c);
    assert_int_equal(c.memory, GP_OPENBLAS_BUFFER);
}

/* ---- OpenBLAS's pool, as the library counts it before and after a load ----
 *
 * The library reads the CPUs and the default thread attributes through
 * sysconf() and pthread_getattr_default_np(); this program defines both
 * (the archive's references resolve to them), passing through to the C
 * library unless a case sets a figure or a failure. */

static long fake_cpus;        /* the CPUs configured, when cpus_faked */
static int cpus_faked;
static int attr_read_fails;   /* pthread_getattr_default_np fails (ENOMEM) */
static int attr_reads, attr_destroys; /* counted while count_attrs is set */
static int count_attrs;
static void (*on_cpu_count)(void); /* called when the CPUs are asked for */
static long fake_online;      /* the CPUs online, when online_faked */
static int online_faked;

long sysconf(int name)
{
    static long (*real)(int);
    if (!real)
        assert_int_equal(gp_dlsym(RTLD_NEXT, "sysconf", &real, sizeof real), 0);
    if (name == _SC_NPROCESSORS_CONF) {
        if (on_cpu_count)
            on_cpu_count();
        if (cpus_faked)
            return fake_cpus;
    }
    if (name == _SC_NPROCESSORS_ONLN && online_faked)
        return fake_online;
    return real(name);
}

/* The CPU device's logical cores: the CPUs online, and one when sysconf
 * does not know (0, or -1). */
static long logical_cores_with(long online)
{
    online_faked = 1;
    fake_online = online;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    int64_t v = -7;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_LOGICAL_CORES, &v),
                     GPUPROBE_OK);
    gpuprobe_context_destroy(ctx);
    online_faked = 0;
    return (long)v;
}

/* A failed open is described by its own failure, never by an earlier
 * one's message still pending in dlerror(): here a seam that fails
 * without a message of its own gets the generic text. */
static void *fail_quietly(const char *file, int mode)
{
    (void)file;
    (void)mode;
    return NULL;
}

/* gp_dlsym's contract: 0 and the pointer when the name is there; -1 and
 * the slot untouched for a name that is not, or a slot not a pointer's
 * size. */
static void dlsym_found_or_minus_one(void **state)
{
    (void)state;
    char path[GP_PATH_LEN];
    snprintf(path, sizeof path, "%s/openblas-noop/libopenblas.so.0", GP_FAKELIB_DIR);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    long (*calls)(int) = NULL;
    assert_int_equal(gp_dlsym(h, "fake_openblas_gemm_calls", &calls, sizeof calls), 0);
    assert_non_null(calls);
    long (*same)(int) = calls;
    assert_int_equal(gp_dlsym(h, "no_such_function", &calls, sizeof calls), -1);
    assert_ptr_equal(calls, same);
    uint32_t small = 7;
    assert_int_equal(gp_dlsym(h, "fake_openblas_gemm_calls", &small, sizeof small), -1);
    assert_int_equal(small, 7);
    dlclose(h);
}

static void dlerror_of_this_open(void **state)
{
    (void)state;
    assert_null(dlopen("libgpuprobe-no-such-library.so.9", RTLD_NOW));
    void *(*saved)(const char *, int) = gp_test_dlopen;
    gp_test_dlopen = fail_quietly;
    assert_null(gp_dlopen("libz.so.1", RTLD_NOW));
    gp_test_dlopen = saved;
    char why[256];
    gp_dlerror(why, sizeof why);
    assert_string_equal(why, "cannot open shared object file");
}

static void cpu_logical_cores(void **state)
{
    (void)state;
    assert_int_equal(logical_cores_with(3), 3);
    assert_int_equal(logical_cores_with(1), 1);
    assert_int_equal(logical_cores_with(0), 1);
    assert_int_equal(logical_cores_with(-1), 1);
}

/* The no-op OpenBLAS, made the one the library loads, opened here too
 * (the same copy): its handle, and its openblas_set_num_threads in *set. */
static void *noop_blas(void (**set)(int))
{
    snprintf(openblas_path, sizeof openblas_path, "%s/openblas-noop/libopenblas.so.0",
             GP_FAKELIB_DIR);
    void *lib = dlopen(openblas_path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    assert_int_equal(gp_dlsym(lib, "openblas_set_num_threads", set, sizeof *set), 0);
    return lib;
}

/* The CPU peak when OpenBLAS reports no thread count (0): the device's
 * cores count, not none. The no-op OpenBLAS says 0 threads here; the run
 * fails verification (its gemm writes nothing) but reports the figures:
 * 3 cores at 2 GHz with AVX2 + FMA (32 fp32 FLOP per cycle) are 192
 * GFLOP/s. */
static void cpu_peak_without_thread_count(void **state)
{
    (void)state;
    void (*set_threads)(int) = NULL;
    void *lib = noop_blas(&set_threads);
    set_threads(0);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    const gp_device *cpu = NULL;
    assert_int_equal(gp_get_device(ctx, 0, &cpu), GPUPROBE_OK); /* enumerated */
    ctx->devices[0].clock_khz = 2000000;
    ctx->devices[0].simd = GPUPROBE_SIMD_AVX2_FMA;
    ctx->devices[0].logical_cores = 3;
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 8), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 1), GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_VERIFY_FAILED);
    assert_non_null(r);
    int64_t threads = -1;
    double peak = -1;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_THREADS, &threads),
                     GPUPROBE_OK);
    assert_int_equal(threads, 0);
    assert_int_equal(gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_PEAK_GFLOPS, &peak),
                     GPUPROBE_OK);
    set_threads(1);
    if (peak != 2000000.0 * 1e3 * 3.0 * 32.0 / 1e9)
        fail_msg("peak %g GFLOP/s with no thread count, want 192 (3 cores)", peak);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    dlclose(lib);
}

/* CPU_THREADS 0 (the default) leaves OpenBLAS's thread count as it is:
 * the run uses, and reports, the 3 threads in force. */
static void cpu_threads_left_as_is(void **state)
{
    (void)state;
    void (*set_threads)(int) = NULL;
    void *lib = noop_blas(&set_threads);
    int (*get_threads)(void) = NULL;
    assert_int_equal(gp_dlsym(lib, "openblas_get_num_threads", &get_threads, sizeof get_threads), 0);
    set_threads(3);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 8), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 1), GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_VERIFY_FAILED);
    assert_non_null(r);
    int64_t threads = -1;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_THREADS, &threads),
                     GPUPROBE_OK);
    int after = get_threads();
    set_threads(1);
    assert_int_equal(threads, 3);
    assert_int_equal(after, 3);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    dlclose(lib);
}

int pthread_getattr_default_np(pthread_attr_t *attr)
{
    static int (*real)(pthread_attr_t *);
    if (!real)
        assert_int_equal(gp_dlsym(RTLD_NEXT, "pthread_getattr_default_np", &real,
                                  sizeof real), 0);
    if (attr_read_fails)
        return ENOMEM;
    int r = real(attr);
    if (r == 0 && count_attrs)
        attr_reads++;
    return r;
}

int pthread_attr_destroy(pthread_attr_t *attr)
{
    static int (*real)(pthread_attr_t *);
    if (!real)
        assert_int_equal(gp_dlsym(RTLD_NEXT, "pthread_attr_destroy", &real, sizeof real),
                         0);
    if (count_attrs)
        attr_destroys++;
    return real(attr);
}

/* One more thread's stack and guard, as pthread_create() maps them. */
static uint64_t default_stack_bytes(void)
{
    pthread_attr_t attr;
    size_t stack = 0, guard = 0;
    assert_int_equal(pthread_getattr_default_np(&attr), 0);
    assert_int_equal(pthread_attr_getstacksize(&attr, &stack), 0);
    assert_int_equal(pthread_attr_getguardsize(&attr, &guard), 0);
    pthread_attr_destroy(&attr);
    return (uint64_t)stack + guard;
}

/* A thread that starts costs its buffer and the stack and guard the
 * process's default thread attributes give (8 MiB and a page when they
 * cannot be read); every attribute object read is destroyed again. */
static void openblas_cost_thread_stack(void **state)
{
    (void)state;
    gp_openblas b;
    memset(&b, 0, sizeof b);
    b.get_num_threads = five_threads;
    gp_blas_cost c;

    pthread_attr_t saved, attr;
    assert_int_equal(pthread_getattr_default_np(&saved), 0);
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, (size_t)3 << 20), 0);
    assert_int_equal(pthread_attr_setguardsize(&attr, 16 * 4096), 0);
    assert_int_equal(pthread_setattr_default_np(&attr), 0);
    pthread_attr_destroy(&attr);
    assert_int_equal(default_stack_bytes(), (UINT64_C(3) << 20) + 16 * 4096);
    attr_reads = attr_destroys = 0;
    count_attrs = 1;
    gp_openblas_cost(&b, 3, 100, 80, 60, 4, &c);
    count_attrs = 0;
    assert_int_equal(c.new_threads, 2);
    assert_int_equal(c.address_space,
                     GP_OPENBLAS_BUFFER +
                         2 * (GP_OPENBLAS_BUFFER + (UINT64_C(3) << 20) + 16 * 4096));
    assert_true(attr_reads >= 1);
    assert_int_equal(attr_destroys, attr_reads);
    assert_int_equal(pthread_setattr_default_np(&saved), 0);
    pthread_attr_destroy(&saved);

    attr_read_fails = 1;
    gp_openblas_cost(&b, 2, 100, 80, 60, 4, &c);
    attr_read_fails = 0;
    assert_int_equal(c.new_threads, 1);
    assert_int_equal(c.address_space,
                     2 * GP_OPENBLAS_BUFFER + (UINT64_C(8) << 20) + 4096);
}

/* The seam for the loads below: OpenBLAS is never already in the process
 * (so the library checks and counts the load), and "loading" it returns
 * the fake one (tests/fakelib) after calling on_open. */
static void *blas_handle;
static void (*blas_set_threads)(int);
static int blas_opens;
static void (*on_open)(void);

static void *fresh_dlopen(const char *file, int mode)
{
    if (strcmp(file, GP_OPENBLAS_SONAME) != 0)
        return dlopen(file, mode);
    if (mode & RTLD_NOLOAD)
        return NULL;
    blas_opens++;
    if (on_open)
        on_open();
    return blas_handle;
}

static struct rlimit as_saved;

/* A root whose /proc/self/status says VmSize, VmData (in KiB), and an
 * address-space limit of 2^64 - 2 bytes: the library sees a limit (and
 * the room the status leaves under it), the process is not limited. */
static void set_limit_and_status(unsigned long long vm_kib)
{
    char text[256];
    snprintf(text, sizeof text, "Name:\tx\nVmSize:\t%llu kB\nVmData:\t1000 kB\n", vm_kib);
    sr_put(root, "proc/self/status", text);
    sr_put(root, "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 8000000 kB\n");
    assert_int_equal(getrlimit(RLIMIT_AS, &as_saved), 0);
    struct rlimit rl = as_saved;
    rl.rlim_cur = RLIM_INFINITY - 1;
    assert_int_equal(setrlimit(RLIMIT_AS, &rl), 0);
}

static void restore_limit(void) { assert_int_equal(setrlimit(RLIMIT_AS, &as_saved), 0); }

static int blas_setup(void **state)
{
    setup(state);
    char path[GP_PATH_LEN];
    snprintf(path, sizeof path, "%s/openblas-noop/libopenblas.so.0", GP_FAKELIB_DIR);
    blas_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(blas_handle);
    assert_int_equal(gp_dlsym(blas_handle, "openblas_set_num_threads", &blas_set_threads,
                              sizeof blas_set_threads), 0);
    blas_opens = 0;
    on_open = NULL;
    on_cpu_count = NULL;
    cpus_faked = 0;
    gp_test_dlopen = fresh_dlopen;
    return 0;
}

static int blas_teardown(void **state)
{
    blas_set_threads(1);
    dlclose(blas_handle);
    on_open = NULL;
    on_cpu_count = NULL;
    cpus_faked = 0;
    return teardown(state);
}

/* The load refused under an address-space limit that leaves 32 MiB: the
 * message, into msg. */
static void refused_load(char *msg, size_t size)
{
    unsigned long long vm_kib = (unsigned long long)((RLIM_INFINITY - 1) >> 10) - 32 * 1024;
    set_limit_and_status(vm_kib);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gp_test_set_sysroot(ctx, root);
    const gp_openblas *ob = NULL;
    gpuprobe_status st = gp_openblas_get(ctx, &ob);
    restore_limit();
    assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_int_equal(blas_opens, 0);
    snprintf(msg, size, "%s", gpuprobe_last_error(ctx));
    gpuprobe_context_destroy(ctx);
}

static void set_thread_vars(const char *openblas, const char *goto_, const char *omp)
{
    const char *names[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"};
    const char *values[] = {openblas, goto_, omp};
    for (int i = 0; i < 3; i++) {
        if (values[i])
            assert_int_equal(setenv(names[i], values[i], 1), 0);
        else
            unsetenv(names[i]);
    }
}

/* The refusal names the pool the load would start and what it needs:
 * the image and, per thread besides the caller, a buffer and a stack. */
static void assert_refused_with(int workers)
{
    char msg[1024], want[160];
    refused_load(msg, sizeof msg);
    unsigned long long need =
        GP_OPENBLAS_IMAGE + (uint64_t)workers * (GP_OPENBLAS_BUFFER + default_stack_bytes());
    snprintf(want, sizeof want, "loading OpenBLAS (libopenblas.so.0) needs %llu bytes", need);
    if (!strstr(msg, want))
        fail_msg("\"%s\" does not say \"%s\"", msg, want);
    snprintf(want, sizeof want, "the library, and %d pool thread%s with a buffer of "
             "%.1f MiB and a stack of %.1f MiB each)", workers, workers == 1 ? "" : "s",
             (double)GP_OPENBLAS_BUFFER / 1048576.0, (double)default_stack_bytes() / 1048576.0);
    if (!strstr(msg, want))
        fail_msg("\"%s\" does not say \"%s\"", msg, want);
}

/* OpenBLAS starts OPENBLAS_NUM_THREADS threads, else GOTO_NUM_THREADS,
 * else OMP_NUM_THREADS (the first that is a positive number), else one
 * per CPU configured, at most 4096, and never more than the CPUs. */
static void openblas_load_counts_threads(void **state)
{
    (void)state;
    const char *was[3];
    char saved[3][64];
    const char *names[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"};
    for (int i = 0; i < 3; i++) {
        was[i] = getenv(names[i]);
        if (was[i]) {
            snprintf(saved[i], sizeof saved[i], "%s", was[i]);
            was[i] = saved[i];
        }
    }
    cpus_faked = 1;
    fake_cpus = 6;
    set_thread_vars(NULL, NULL, NULL);
    assert_refused_with(5);
    set_thread_vars("1", NULL, NULL);
    assert_refused_with(0);
    set_thread_vars("3", "2", "4");
    assert_refused_with(2);
    set_thread_vars(NULL, "2", NULL);
    assert_refused_with(1);
    set_thread_vars(NULL, NULL, "4");
    assert_refused_with(3);
    set_thread_vars("0", "many", "2"); /* not positive numbers: skipped */
    assert_refused_with(1);
    set_thread_vars("-3", NULL, NULL);
    assert_refused_with(5);
    set_thread_vars("10", NULL, NULL); /* more than the CPUs */
    assert_refused_with(5);
    set_thread_vars("6", NULL, NULL);
    assert_refused_with(5);
    fake_cpus = 20;
    set_thread_vars("10", NULL, NULL); /* decimal */
    assert_refused_with(9);
    set_thread_vars(NULL, NULL, NULL);
    fake_cpus = 4095;
    assert_refused_with(4094);
    fake_cpus = 4096;
    assert_refused_with(4095);
    fake_cpus = 5000;
    assert_refused_with(4095);
    fake_cpus = 1;
    assert_refused_with(0);
    fake_cpus = 0; /* unknown: one */
    assert_refused_with(0);
    fake_cpus = -1;
    assert_refused_with(0);
    cpus_faked = 0;
    for (int i = 0; i < 3; i++) {
        if (was[i])
            setenv(names[i], was[i], 1);
        else
            unsetenv(names[i]);
    }
}

/* ---- the wait for the pool's buffers after a load under a limit ----
 *
 * The fake OpenBLAS starts no thread: a thread of the test plays its pool,
 * mapping address space (counted in the real VmSize) in steps once the
 * load has begun. */

typedef struct {
    unsigned delay_ms;
    size_t bytes;
} map_step;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int go;
    const map_step *steps;
    int nsteps;
    int done; /* steps mapped: read with __atomic */
    void *maps[4];
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, 0, 0, {NULL}};

static void *pool_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool.lock);
    while (!pool.go)
        pthread_cond_wait(&pool.cond, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < pool.nsteps; i++) {
        struct timespec d = {pool.steps[i].delay_ms / 1000,
                             (long)(pool.steps[i].delay_ms % 1000) * 1000000L};
        nanosleep(&d, NULL);
        void *p = mmap(NULL, pool.steps[i].bytes, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        pool.maps[i] = p == MAP_FAILED ? NULL : p;
        __atomic_store_n(&pool.done, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void pool_start(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.go = 1;
    pthread_cond_signal(&pool.cond);
    pthread_mutex_unlock(&pool.lock);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Load with a pool of `threads` that maps `steps` after the load begins;
 * returns the seconds the load took and the steps mapped by then. */
static double load_with_pool(int threads, const map_step *steps, int nsteps, int *done)
{
    pool.go = 0;
    pool.steps = steps;
    pool.nsteps = nsteps;
    pool.done = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, pool_main, NULL), 0);
    blas_set_threads(threads);
    if (!on_open)
        on_open = pool_start;
    set_limit_and_status(1000);
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gp_test_set_sysroot(ctx, root);
    const gp_openblas *ob = NULL;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gpuprobe_status st = gp_openblas_get(ctx, &ob);
    double s = seconds_since(&t0);
    *done = __atomic_load_n(&pool.done, __ATOMIC_ACQUIRE);
    restore_limit();
    pool_start(); /* when the load never opened the library */
    assert_int_equal(pthread_join(t, NULL), 0);
    for (int i = 0; i < nsteps; i++)
        if (pool.maps[i])
            munmap(pool.maps[i], steps[i].bytes);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(blas_opens, 1);
    assert_ptr_equal(ob->lib, blas_handle);
    gpuprobe_context_destroy(ctx);
    return s;
}

/* The load returns once the pool's threads have mapped a buffer and a
 * stack each (VmSize grew by them), not before and not a second later. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||    \
    __has_feature(memory_sanitizer)
#define GP_SANITIZED 1
#endif
#endif
#ifndef GP_SANITIZED
#define GP_SANITIZED 0
#endif

static void openblas_load_waits_for_pool(void **state)
{
    (void)state;
    /* Exactly what the library waits for; a sanitizer's allocator gives
     * memory back to the system meanwhile (VmSize shrinks by some pages),
     * so a little more there. */
    size_t slack = GP_SANITIZED ? (size_t)1 << 20 : 0;
    const map_step steps[] = {{100, (size_t)GP_OPENBLAS_BUFFER},
                              {150, (size_t)default_stack_bytes() + slack}};
    int done = 0;
    double s = load_with_pool(2, steps, 2, &done);
    assert_int_equal(done, 2);
    if (s > 0.8)
        fail_msg("the load took %.3f s for a pool mapped after 0.25 s", s);
}

/* A pool that never maps its buffers: the wait gives up after a second. */
static void openblas_load_wait_gives_up(void **state)
{
    (void)state;
    int done = 0;
    alarm(30); /* a wait that never ends kills the program */
    struct mallinfo2 before = mallinfo2();
    double s = load_with_pool(3, NULL, 0, &done);
    struct mallinfo2 after = mallinfo2();
    alarm(0);
    if (s < 0.9 || s > 10)
        fail_msg("the load took %.3f s, not about one second", s);
    /* VmSize was read about a thousand times: each read's text freed */
    if (after.uordblks > before.uordblks + (1u << 20))
        fail_msg("the heap grew by %zu bytes during the wait",
                 after.uordblks - before.uordblks);
}

/* No pool thread (the caller's only): nothing to wait for, even when
 * VmSize has shrunk since the load began. */
static void *premapped;
static const size_t premapped_bytes = (size_t)64 << 20;

static void unmap_premapped(void)
{
    munmap(premapped, premapped_bytes);
    premapped = NULL;
}

static void openblas_load_no_pool_no_wait(void **state)
{
    (void)state;
    premapped = mmap(NULL, premapped_bytes, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(premapped != MAP_FAILED);
    on_open = unmap_premapped;
    int done = 0;
    double s = load_with_pool(1, NULL, 0, &done);
    assert_null(premapped);
    if (s > 0.5)
        fail_msg("the load took %.3f s with no pool thread", s);
}

/* VmSize unknown before the load (no descriptor left to read
 * /proc/self/status with, from the check of the load on): no wait. */
static struct rlimit nofile_saved;
static int hog_fd = -1;

static void use_up_descriptors(void)
{
    on_cpu_count = NULL;
    hog_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(hog_fd >= 0);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &nofile_saved), 0);
    struct rlimit rl = nofile_saved;
    rl.rlim_cur = (rlim_t)hog_fd + 1; /* every lower one is open */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static void openblas_load_vm_unknown_no_wait(void **state)
{
    (void)state;
    on_cpu_count = use_up_descriptors;
    on_open = pool_start;
    int done = 0;
    double s = load_with_pool(2, NULL, 0, &done);
    assert_true(hog_fd >= 0);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &nofile_saved), 0);
    close(hog_fd);
    hog_fd = -1;
    if (s > 0.5)
        fail_msg("the load took %.3f s with VmSize unknown", s);
}

/* A CPU matmul refused for address space says what OpenBLAS maps: the
 * calling thread's buffer, and the new pool threads' buffers and stacks
 * when the run starts any. */
static void cpu_matmul_space_detail(void **state)
{
    (void)state;
    static const struct {
        int64_t threads;
        const char *tail;
    } cases[] = {
        {1, "the calling thread's buffer), but"},
        {2, "the calling thread's buffer and the buffers and stacks of 1 new pool "
            "thread), but"},
        {3, "the calling thread's buffer and the buffers and stacks of 2 new pool "
            "threads), but"},
    };
    blas_set_threads(1);
    cpus_faked = 1;
    fake_cpus = 1; /* the load starts no pool thread */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* room for the load (64 MiB), not for a 128 MiB buffer */
        unsigned long long vm_kib =
            (unsigned long long)((RLIM_INFINITY - 1) >> 10) - 100 * 1024;
        set_limit_and_status(vm_kib);
        gpuprobe_context *ctx = NULL;
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        gp_test_set_sysroot(ctx, root);
        gpuprobe_matmul_options *o = NULL;
        assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 64), GPUPROBE_OK);
        assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS,
                                                     cases[i].threads), GPUPROBE_OK);
        gpuprobe_matmul_result *r = NULL;
        gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
        restore_limit();
        assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
        assert_null(r);
        const char *msg = gpuprobe_last_error(ctx);
        assert_non_null(ctx->openblas);
        gp_blas_cost c;
        gp_openblas_cost(ctx->openblas, cases[i].threads, 64, 64, 64, 4, &c);
        char want[256];
        snprintf(want, sizeof want, "bytes, OpenBLAS %llu bytes: %s",
                 (unsigned long long)c.address_space, cases[i].tail);
        if (!strstr(msg, want))
            fail_msg("\"%s\" does not say \"%s\"", msg, want);
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
    cpus_faked = 0;
}

/* No limit on the address space, or nothing known of the host's memory:
 * the load does not wait for the pool (and leaves no error behind). */
static void openblas_load_unlimited_no_wait(void **state)
{
    (void)state;
    blas_set_threads(3);
    for (int known = 0; known < 2; known++) {
        if (known) /* MemAvailable 0: the load needs address space, not memory */
            sr_put(root, "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 0 kB\n");
        gpuprobe_context *ctx = NULL;
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        gp_test_set_sysroot(ctx, root);
        const gp_openblas *ob = NULL;
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(gp_openblas_get(ctx, &ob), GPUPROBE_OK);
        double s = seconds_since(&t0);
        assert_ptr_equal(ob->lib, blas_handle);
        assert_string_equal(gpuprobe_last_error(ctx), "");
        if (s > 0.5)
            fail_msg("the load took %.3f s with no limit (host memory %s)", s,
                     known ? "known" : "unknown");
        gpuprobe_context_destroy(ctx);
    }
    assert_int_equal(blas_opens, 2);
}

/* MAX_THREADS=N of the build configuration caps a run's threads: a
 * positive decimal below 2^20; anything else, or no such word, says
 * nothing (0). */
static void openblas_config_max_threads(void **state)
{
    (void)state;
    void (*set_config)(const char *) = NULL;
    assert_int_equal(gp_dlsym(blas_handle, "fake_openblas_set_config", &set_config,
                              sizeof set_config), 0);
    static const struct {
        const char *config;
        int max;
    } cases[] = {
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64", 64},
        {"OpenBLAS 0.3.21 MAX_THREADS=10 Zen", 10},
        {"OpenBLAS MAX_THREADS=1", 1},
        {"OpenBLAS MAX_THREADS=1048575", 1048575},
        {"OpenBLAS MAX_THREADS=600000", 600000},
        {"OpenBLAS MAX_THREADS=1048576", 0},
        {"OpenBLAS MAX_THREADS=5000000000", 0},
        {"OpenBLAS MAX_THREADS=0", 0},
        {"OpenBLAS MAX_THREADS=-5", 0},
        {"OpenBLAS MAX_THREADS=", 0},
        {"OpenBLAS 0.3.21 Haswell", 0},
        {NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_config(cases[i].config);
        gpuprobe_context *ctx = NULL;
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        gp_test_set_sysroot(ctx, root);
        const gp_openblas *ob = NULL;
        assert_int_equal(gp_openblas_get(ctx, &ob), GPUPROBE_OK);
        if (ob->max_threads != cases[i].max)
            fail_msg("\"%s\": MAX_THREADS %d, not %d",
                     cases[i].config ? cases[i].config : "(none)", ob->max_threads,
                     cases[i].max);
        gpuprobe_context_destroy(ctx);
    }
    set_config("OpenBLAS 0.0.0 FAKE");
}

/* The CPU's BLAS core attribute: OpenBLAS's core name, however short;
 * "unknown" for none or an empty one. */
static void openblas_core_attribute(void **state)
{
    (void)state;
    void (*set_corename)(const char *) = NULL;
    assert_int_equal(gp_dlsym(blas_handle, "fake_openblas_set_corename", &set_corename,
                              sizeof set_corename), 0);
    static const struct {
        const char *core, *want;
    } cases[] = {{"Z", "Z"}, {"", "unknown"}, {NULL, "unknown"}, {"Haswell", "Haswell"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_corename(cases[i].core);
        gpuprobe_context *ctx = NULL;
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        gp_test_set_sysroot(ctx, root);
        const char *core = NULL;
        assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core),
                         GPUPROBE_OK);
        assert_string_equal(core, cases[i].want);
        gpuprobe_context_destroy(ctx);
    }
    set_corename("Noop");
}

/* The pool as OpenBLAS reports it: the threads it holds (the caller
 * among them) and whether they run. Running threads cost nothing new; a
 * stopped pool (after a fork) restarts all but the caller. A thread count
 * below one counts as one. */
static int no_threads(void) { return 0; }

static void openblas_cost_pool_state(void **state)
{
    (void)state;
    gp_openblas b;
    memset(&b, 0, sizeof b);
    b.get_num_threads = five_threads;
    int held = 4, running = 1;
    b.pool_threads = &held;
    b.pool_running = &running;
    gp_blas_cost c;
    uint64_t thread = GP_OPENBLAS_BUFFER + default_stack_bytes();
    gp_openblas_cost(&b, 6, 100, 80, 60, 4, &c);
    assert_int_equal(c.threads, 6);
    assert_int_equal(c.new_threads, 2); /* 5 workers, 3 running */
    assert_int_equal(c.address_space, GP_OPENBLAS_BUFFER + 2 * thread);
    gp_openblas_cost(&b, 2, 100, 80, 60, 4, &c); /* fewer than it holds */
    assert_int_equal(c.threads, 2);
    assert_int_equal(c.new_threads, 0);
    assert_int_equal(c.address_space, GP_OPENBLAS_BUFFER);
    running = 0;
    gp_openblas_cost(&b, 2, 100, 80, 60, 4, &c); /* stopped: its 3 restart */
    assert_int_equal(c.new_threads, 3);
    assert_int_equal(c.address_space, GP_OPENBLAS_BUFFER + 3 * thread);
    gp_openblas_cost(&b, 6, 100, 80, 60, 4, &c);
    assert_int_equal(c.new_threads, 5);
    b.pool_threads = b.pool_running = NULL;
    b.get_num_threads = no_threads;
    gp_openblas_cost(&b, 0, 100, 80, 60, 4, &c);
    assert_int_equal(c.threads, 1);
    assert_int_equal(c.new_threads, 0);
    assert_int_equal(c.address_space, GP_OPENBLAS_BUFFER);
    assert_int_equal(c.memory, UINT64_C(4) * 60 * (80 + 100));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(runtime_lacks_function, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_lacks_function, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_old_uuid, setup, teardown),
        cmocka_unit_test_setup_teardown(complete_libraries_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_not_loadable, setup, teardown),
        cmocka_unit_test(error_names_as_given),
        cmocka_unit_test_setup_teardown(openblas_lacks_function, setup, teardown),
        cmocka_unit_test_setup_teardown(openblas_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(openblas_name, setup, teardown),
        cmocka_unit_test_setup_teardown(gemm_that_does_nothing, setup, teardown),
        cmocka_unit_test(cpu_logical_cores),
        cmocka_unit_test(dlsym_found_or_minus_one),
        cmocka_unit_test(dlerror_of_this_open),
        cmocka_unit_test(openblas_cost),
        cmocka_unit_test(openblas_cost_thread_stack),
        cmocka_unit_test(openblas_cost_pool_state),
        cmocka_unit_test_setup_teardown(openblas_load_counts_threads, blas_setup, blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_load_waits_for_pool, blas_setup, blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_load_wait_gives_up, blas_setup, blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_load_no_pool_no_wait, blas_setup, blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_load_vm_unknown_no_wait, blas_setup,
                                        blas_teardown),
        cmocka_unit_test_setup_teardown(cpu_matmul_space_detail, blas_setup, blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_load_unlimited_no_wait, blas_setup,
                                        blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_config_max_threads, blas_setup,
                                        blas_teardown),
        cmocka_unit_test_setup_teardown(openblas_core_attribute, blas_setup, blas_teardown),
        cmocka_unit_test_setup_teardown(cpu_peak_without_thread_count, setup, teardown),
        cmocka_unit_test_setup_teardown(cpu_threads_left_as_is, setup, teardown),
    };
    return cmocka_run_group_tests_name("loader", tests, NULL, NULL);
}
