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
#include <math.h>

#include "internal.h"
#include "cpu_blas.h"
#ifdef GPUPROBE_HAVE_CUDA
#include "cuda_loader.h"
#endif
#include "sysroot_util.h"

#ifndef GP_FAKELIB_DIR
#error "GP_FAKELIB_DIR must name the fake libraries' directory (tests/fakelib.cmake)"
#endif

/* ---- the seam: where libcuda.so.1 and libopenblas.so.0 come from ---- */

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
    return dlopen(file, mode);
}

static char root[64]; /* an empty sysroot */

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
    "libcuda.so.1 is installed but the NVIDIA kernel driver is not running: "
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
    static const char head[] = "libcuda.so.1 not found: no NVIDIA driver is installed (";
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
                 "libcuda.so.1 not found: no NVIDIA driver is installed");
    assert_true(cuda_opens >= 1);
    gpuprobe_context_destroy(ctx);
}

#else /* no CUDA in this build: nothing is loaded */

static void runtime_lacks_function(void **state) { (void)state; skip(); }
static void driver_lacks_function(void **state) { (void)state; skip(); }
static void driver_old_uuid(void **state) { (void)state; skip(); }
static void complete_libraries_bound(void **state) { (void)state; skip(); }
static void driver_not_loadable(void **state) { (void)state; skip(); }

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
}

/* The negative control: an OpenBLAS whose gemm computes nothing. The
 * output stays as poisoned (NaN), and verification fails in fp32 and
 * fp64, with the figures still reported. */
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
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_VERIFY_FAILED);
        assert_non_null(r);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(runtime_lacks_function, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_lacks_function, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_old_uuid, setup, teardown),
        cmocka_unit_test_setup_teardown(complete_libraries_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_not_loadable, setup, teardown),
        cmocka_unit_test_setup_teardown(openblas_lacks_function, setup, teardown),
        cmocka_unit_test_setup_teardown(openblas_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(openblas_name, setup, teardown),
        cmocka_unit_test_setup_teardown(gemm_that_does_nothing, setup, teardown),
        cmocka_unit_test(openblas_cost),
    };
    return cmocka_run_group_tests_name("loader", tests, NULL, NULL);
}
