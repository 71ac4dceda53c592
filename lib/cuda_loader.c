/*
 * cuda_loader.c - run-time loading of the CUDA runtime, driver and cuBLAS
 * (NVML: nvml.c), and the decision of why CUDA is or is not usable.
 *
 * Nothing here links against a CUDA library: the CUDA headers give types and
 * enum constants, and every function is looked up with dlsym() by the name
 * the headers expand it to. Libraries are opened by SONAME (the system
 * loader's search path) or from the absolute directory the user names in
 * GPUPROBE_CUDA_LIBDIR; never from the current directory.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cuda_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#define SYM(lib, name, field) gp_dlsym((lib), (name), &(field), sizeof(field))

/* The majors libcudart.so.N is tried with, newest first. */
static const int known_majors[] = {13, 12, 11};

/* Majors of libcudart.so.N to try: the build's own first, then the others
 * newest first; how many (at most one more than known_majors has). */
static size_t runtime_majors(int *out)
{
    size_t n = 0;
    int own = CUDART_VERSION / 1000;
    out[n++] = own;
    for (size_t i = 0; i < sizeof known_majors / sizeof known_majors[0]; i++)
        if (known_majors[i] != own)
            out[n++] = known_majors[i];
    return n;
}

/* "<libdir>/<file>", or "<file>" (a SONAME) without GPUPROBE_CUDA_LIBDIR,
 * in a new heap string; NULL with errno ENAMETOOLONG or ENOMEM. */
static char *lib_path(const gpuprobe_context *ctx, const char *file)
{
    if (ctx->env_libdir_set)
        return gp_path_join(ctx->env_libdir, "/", file);
    return gp_path_join(file, NULL, NULL);
}

/* Open libcudart.so.<major>; on success the name given to dlopen is copied
 * to name[name_size], else err says why (and *oom is set when the host is
 * out of memory). */
static void *open_runtime(gpuprobe_context *ctx, int major, char *name,
                          size_t name_size, char *err, size_t err_size, int *oom)
{
    char file[32];
    gp_snprintf(file, sizeof file, "libcudart.so.%d", major);
    char *path = lib_path(ctx, file);
    if (!path) {
        if (errno == ENOMEM)
            *oom = 1;
        gp_strlcpy(err, "path too long", err_size);
        return NULL;
    }
    void *h = gp_dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h)
        gp_strlcpy(name, path, name_size);
    else
        gp_dlerror(err, err_size);
    free(path);
    return h;
}

/* A function to look up: where it goes in gp_cuda, the symbol the CUDA
 * headers map its name to, and an older symbol of the same signature to
 * fall back on (or NULL). */
typedef struct sym_slot {
    size_t off;
    const char *symbol, *older;
} sym_slot;

#define SLOT(field, symbol) {offsetof(gp_cuda, field), symbol, NULL}

static const sym_slot runtime_syms[] = {
    SLOT(rt.RuntimeGetVersion, "cudaRuntimeGetVersion"),
    SLOT(rt.DriverGetVersion, "cudaDriverGetVersion"),
    SLOT(rt.GetDeviceCount, "cudaGetDeviceCount"),
    SLOT(rt.GetErrorName, "cudaGetErrorName"),
    SLOT(rt.GetErrorString, "cudaGetErrorString"),
    SLOT(rt.GetLastError, "cudaGetLastError"),
    SLOT(rt.DeviceGetAttribute, "cudaDeviceGetAttribute"),
    SLOT(rt.DeviceGetPCIBusId, "cudaDeviceGetPCIBusId"),
    SLOT(rt.MemGetInfo, "cudaMemGetInfo"),
    SLOT(rt.Malloc, "cudaMalloc"),
    SLOT(rt.Free, "cudaFree"),
    SLOT(rt.MallocHost, "cudaMallocHost"),
    SLOT(rt.FreeHost, "cudaFreeHost"),
    SLOT(rt.MemcpyAsync, "cudaMemcpyAsync"),
    SLOT(rt.MemsetAsync, "cudaMemsetAsync"),
    SLOT(rt.StreamCreateWithFlags, "cudaStreamCreateWithFlags"),
    SLOT(rt.StreamDestroy, "cudaStreamDestroy"),
    SLOT(rt.StreamSynchronize, "cudaStreamSynchronize"),
    SLOT(rt.EventCreate, "cudaEventCreate"),
    SLOT(rt.EventRecord, "cudaEventRecord"),
    SLOT(rt.EventSynchronize, "cudaEventSynchronize"),
    SLOT(rt.EventElapsedTime, "cudaEventElapsedTime"),
    SLOT(rt.EventDestroy, "cudaEventDestroy"),
};

static const sym_slot driver_syms[] = {
    SLOT(drv.Init, "cuInit"),
    SLOT(drv.DriverGetVersion, "cuDriverGetVersion"),
    SLOT(drv.DeviceGetCount, "cuDeviceGetCount"),
    SLOT(drv.DeviceGet, "cuDeviceGet"),
    SLOT(drv.DeviceGetName, "cuDeviceGetName"),
    /* cuda.h: #define cuDeviceGetUuid cuDeviceGetUuid_v2 (older drivers
     * only have the unversioned one, with the same signature). */
    {offsetof(gp_cuda, drv.DeviceGetUuid), "cuDeviceGetUuid_v2", "cuDeviceGetUuid"},
    /* cuda.h: #define cuDeviceTotalMem cuDeviceTotalMem_v2 */
    SLOT(drv.DeviceTotalMem, "cuDeviceTotalMem_v2"),
    SLOT(drv.DeviceGetAttribute, "cuDeviceGetAttribute"),
    SLOT(drv.DevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState"),
    SLOT(drv.GetErrorName, "cuGetErrorName"),
    /* Context entry and the memory fallback; all exist since CUDA 7
     * (cuda.h maps the unversioned names to the _v2 symbols). */
    SLOT(drvctx.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    SLOT(drvctx.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    SLOT(drvctx.CtxPushCurrent, "cuCtxPushCurrent_v2"),
    SLOT(drvctx.CtxPopCurrent, "cuCtxPopCurrent_v2"),
    SLOT(drvctx.MemGetInfo, "cuMemGetInfo_v2"),
};

static const sym_slot cublas_syms[] = {
    SLOT(blas.Create, "cublasCreate_v2"),
    SLOT(blas.Destroy, "cublasDestroy_v2"),
    SLOT(blas.SetStream, "cublasSetStream_v2"),
    SLOT(blas.SetMathMode, "cublasSetMathMode"),
    SLOT(blas.GetVersion, "cublasGetVersion_v2"),
    SLOT(blas.GemmEx, "cublasGemmEx"),
    SLOT(blas.Sdot, "cublasSdot_v2"),
    SLOT(blas.SetPointerMode, "cublasSetPointerMode_v2"),
};

#undef SLOT

/* Look up every function of the table in lib into c; the symbol of the
 * first one missing (its older name missing too), or NULL when all are
 * there. */
static const char *bind(gp_cuda *c, void *lib, const sym_slot *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *slot = (char *)c + t[i].off;
        if (gp_dlsym(lib, t[i].symbol, slot, sizeof(void (*)(void))) != 0 &&
            (!t[i].older || gp_dlsym(lib, t[i].older, slot, sizeof(void (*)(void))) != 0))
            return t[i].symbol;
    }
    return NULL;
}

#define BIND(c, lib, table) bind((c), (lib), (table), sizeof(table) / sizeof((table)[0]))

static const char *bind_runtime(gp_cuda *c) { return BIND(c, c->rt_lib, runtime_syms); }
static const char *bind_driver(gp_cuda *c) { return BIND(c, c->drv_lib, driver_syms); }

/* ---- error names --------------------------------------------------------- */

const char *gp_cuda_rt_error_name(const gp_cuda *cuda, cudaError_t err)
{
    const char *s = NULL;
    if (cuda && cuda->rt_lib && cuda->rt.GetErrorName)
        s = cuda->rt.GetErrorName(err);
    if (s && s[0])
        return s;
    return err == cudaSuccess ? "cudaSuccess" : "unrecognized CUDA runtime error";
}

const char *gp_cuda_drv_error_name(const gp_cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c && c->drv.GetErrorName && c->drv.GetErrorName(r, &s) == CUDA_SUCCESS &&
        s && s[0])
        return s;
    return "unrecognized CUDA driver error";
}

const char *gp_cublas_status_name(const gp_cuda *cuda, cublasStatus_t st)
{
    if (cuda && cuda->blas_lib && cuda->blas.GetStatusName) {
        const char *s = cuda->blas.GetStatusName(st);
        if (s && s[0])
            return s;
    }
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "unrecognized cuBLAS status";
    }
}

/* ---- system facts used to name a cause ----------------------------------- */

/* Does sysroot + path exist? (No when the path cannot even be built.) */
static int sys_exists(const gpuprobe_context *ctx, const char *path)
{
    char *p = gp_path_join(ctx->sysroot, path, NULL);
    int yes = p && access(p, F_OK) == 0;
    free(p);
    return yes;
}

/* First /dev/nvidia* node (nvidiactl, nvidia0..) that exists but cannot be
 * opened for reading and writing; copied to bad. 1 if one was found. */
static int device_node_denied(const gpuprobe_context *ctx, char *bad, size_t size)
{
    char *dir = gp_path_join(ctx->sysroot, "/dev", NULL);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        free(dir);
        return 0;
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strncmp(n, "nvidia", 6) != 0)
            continue;
        int is_gpu = n[6] >= '0' && n[6] <= '9';
        if (!is_gpu && strcmp(n, "nvidiactl") != 0 && strcmp(n, "nvidia-uvm") != 0)
            continue;
        char *p = gp_path_join(dir, "/", n);
        if (p && access(p, R_OK | W_OK) != 0 && (errno == EACCES || errno == EPERM)) {
            gp_snprintf(bad, size, "/dev/%s", n);
            found = 1;
        }
        free(p);
    }
    closedir(d);
    free(dir);
    return found;
}

/* Number of GPUs the kernel driver lists in /proc/driver/nvidia/gpus, or -1. */
static int kernel_gpu_count(const gpuprobe_context *ctx)
{
    char *dir = gp_path_join(ctx->sysroot, "/proc/driver/nvidia/gpus", NULL);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Is the NVIDIA kernel module visibly absent? (WSL has /dev/dxg instead.) */
static const char *kernel_driver_missing(const gpuprobe_context *ctx)
{
    if (sys_exists(ctx, "/dev/dxg"))
        return NULL;
    if (!sys_exists(ctx, "/proc/driver/nvidia/version"))
        return "/proc/driver/nvidia/version";
    if (!sys_exists(ctx, "/dev/nvidiactl"))
        return "/dev/nvidiactl";
    return NULL;
}

/* ---- the cause decision -------------------------------------------------- */

static void set_cause(gpuprobe_context *ctx, gpuprobe_cuda_cause cause,
                      const char *fmt, ...) GP_PRINTF(3, 4);
static void set_cause(gpuprobe_context *ctx, gpuprobe_cuda_cause cause,
                      const char *fmt, ...)
{
    ctx->cuda_cause = cause;
    va_list ap;
    va_start(ap, fmt);
    gp_vsnprintf(ctx->cuda_detail, sizeof ctx->cuda_detail, fmt, ap);
    va_end(ap);
    gp_quote_inplace(ctx->cuda_detail);
}

/* The GPUs present whatever CUDA_VISIBLE_DEVICES says: NVML's count (NVML
 * ignores the variable), else the kernel driver's list; -1 when neither
 * can tell. */
static int gpus_present(const gpuprobe_context *ctx, gp_cuda *c)
{
    unsigned n = 0;
    if (gp_nvml_load(&c->nvml, ctx->env_nvml_off) && c->nvml.f.DeviceGetCount &&
        c->nvml.f.DeviceGetCount(&n) == GP_NVML_SUCCESS && n <= GP_MAX_GPUS)
        return (int)n;
    return kernel_gpu_count(ctx);
}

/* Does CUDA_VISIBLE_DEVICES select one of the `ngpu` GPUs present? CUDA
 * reads the list up to its first entry that names no GPU, so the first
 * entry decides: an index below ngpu, or a unique prefix of a GPU's UUID
 * (NVML's), selects. 1 yes, 0 no, -1 cannot tell (a UUID without NVML,
 * a MIG instance). */
static int visible_selects(gp_cuda *c, const char *vis, int ngpu)
{
    while (*vis == ' ' || *vis == '\t')
        vis++;
    size_t len = strcspn(vis, ",");
    while (len && (vis[len - 1] == ' ' || vis[len - 1] == '\t'))
        len--;
    if (len == 0)
        return 0;
    if (strspn(vis, "0123456789") >= len) {
        /* An index: below ngpu, read digit by digit (no overflow: it
         * stops as soon as the number reaches ngpu). */
        unsigned long idx = 0;
        for (size_t i = 0; i < len; i++) {
            idx = idx * 10 + (unsigned long)(vis[i] - '0');
            if (idx >= (unsigned long)ngpu)
                return 0;
        }
        return 1;
    }
    if (len < 4 || strncasecmp(vis, "GPU-", 4) != 0)
        return strncasecmp(vis, "MIG-", 4) == 0 ? -1 : 0;
    if (!c->nvml.ok || !c->nvml.f.DeviceGetHandleByIndex || !c->nvml.f.DeviceGetUUID)
        return -1;
    int matches = 0;
    for (int i = 0; i < ngpu; i++) {
        void *dev = NULL;
        char uuid[96];
        if (c->nvml.f.DeviceGetHandleByIndex((unsigned)i, &dev) != GP_NVML_SUCCESS ||
            c->nvml.f.DeviceGetUUID(dev, uuid, sizeof uuid) != GP_NVML_SUCCESS)
            return -1;
        /* Bounded by the buffer: nothing is read past it, terminated or not. */
        matches += strnlen(uuid, sizeof uuid) >= len && strncasecmp(uuid, vis, len) == 0;
    }
    return matches == 1;
}

/* No device is visible: hidden by CUDA_VISIBLE_DEVICES, no permission on the
 * device nodes, or really none. CUDA_VISIBLE_DEVICES is blamed only when it
 * hides GPUs that are there. */
static void no_device(gpuprobe_context *ctx, gp_cuda *c, const char *what)
{
    char bad[64];
    if (device_node_denied(ctx, bad, sizeof bad)) {
        set_cause(ctx, GPUPROBE_CUDA_NO_PERMISSION,
                  "%s: no read/write permission on %s (add the user to the "
                  "group that owns it, often 'video' or 'render')", what, bad);
        return;
    }
    const char *vis = gp_getenv("CUDA_VISIBLE_DEVICES");
    if (!vis) {
        set_cause(ctx, GPUPROBE_CUDA_NO_DEVICE,
                  "%s: the driver is running and lists no GPU", what);
        return;
    }
    char q[96];
    gp_quote(q, sizeof q, vis, 64);
    int k = gpus_present(ctx, c);
    int sel = k > 0 ? visible_selects(c, vis, k) : -1;
    if (sel == 0)
        set_cause(ctx, GPUPROBE_CUDA_DEVICES_HIDDEN,
                  "%s: CUDA_VISIBLE_DEVICES is set to \"%s\", which hides "
                  "all %d GPU(s) the driver lists", what, q, k);
    else if (k == 0)
        set_cause(ctx, GPUPROBE_CUDA_NO_DEVICE,
                  "%s: the NVIDIA driver is running but there is no GPU "
                  "(CUDA_VISIBLE_DEVICES=\"%s\" hides nothing)", what, q);
    else if (sel == 1)
        set_cause(ctx, GPUPROBE_CUDA_NO_DEVICE,
                  "%s: CUDA_VISIBLE_DEVICES=\"%s\" selects GPUs the driver "
                  "lists, but CUDA can use none of them", what, q);
    else
        set_cause(ctx, GPUPROBE_CUDA_NO_DEVICE,
                  "%s: no CUDA device is visible; CUDA_VISIBLE_DEVICES is set "
                  "to \"%s\" (whether it hides GPUs cannot be told: %s)", what, q,
                  k < 0 ? "neither NVML nor /proc/driver/nvidia/gpus lists the GPUs"
                        : "its first entry is a UUID NVML cannot check");
}

static void too_old(gpuprobe_context *ctx, const char *extra)
{
    char d[16], r[16];
    gp_format_cuda_version(d, sizeof d, ctx->driver_version);
    gp_format_cuda_version(r, sizeof r, ctx->runtime_version);
    set_cause(ctx, GPUPROBE_CUDA_DRIVER_TOO_OLD,
              "driver supports CUDA %s, runtime is %s%s: update the NVIDIA "
              "driver, or point GPUPROBE_CUDA_LIBDIR at an older CUDA runtime",
              d, r, extra);
}

/* Load the driver (always by SONAME from the system loader). */
static int open_driver(gp_cuda *c, char *err, size_t err_size)
{
    c->drv_lib = gp_dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!c->drv_lib) {
        gp_dlerror(err, err_size);
        return -1;
    }
    return 0;
}

/* A step of the decision below: go on to the next one, or the cause is
 * decided (set_cause() was called), or the host ran out of memory. */
typedef enum { STEP_ON, STEP_DECIDED, STEP_OOM } step;

/* The runtime's path, quoted for messages. */
static void rt_label(const gp_cuda *c, char *buf, size_t size)
{
    gp_quote(buf, size, c->rt_name, 128);
}

/* 0. GPUPROBE_CUDA_LIBDIR, when set, must be an absolute path that fits. */
static step check_libdir(gpuprobe_context *ctx)
{
    if (!ctx->env_libdir_set)
        return STEP_ON;
    if (ctx->env_libdir[0] == '\0') {
        set_cause(ctx, GPUPROBE_CUDA_OTHER,
                  "GPUPROBE_CUDA_LIBDIR is too long (at most %d bytes): refused",
                  GP_PATH_LEN - 1);
        return STEP_DECIDED;
    }
    if (ctx->env_libdir[0] != '/') {
        char q[128];
        gp_quote(q, sizeof q, ctx->env_libdir, 96);
        set_cause(ctx, GPUPROBE_CUDA_OTHER,
                  "GPUPROBE_CUDA_LIBDIR=\"%s\" is not an absolute path: "
                  "refused (libraries are never loaded relative to the "
                  "current directory)", q);
        return STEP_DECIDED;
    }
    return STEP_ON;
}

/* Bind the loaded runtime's functions and read its version. */
static step bind_runtime_version(gpuprobe_context *ctx, gp_cuda *c)
{
    const char *missing = bind_runtime(c);
    if (missing) {
        char name[160];
        rt_label(c, name, sizeof name);
        set_cause(ctx, GPUPROBE_CUDA_OTHER, "%s lacks the function %s", name, missing);
        return STEP_DECIDED;
    }
    int v = 0;
    ctx->runtime_version = 0;
    if (c->rt.RuntimeGetVersion(&v) == cudaSuccess && v > 0)
        ctx->runtime_version = v;
    return STEP_ON;
}

/* 1. The runtime: the first libcudart.so.N of the majors to try. */
static step load_runtime(gpuprobe_context *ctx, gp_cuda *c, const int *majors, size_t nm)
{
    char err[256], tried[256] = "";
    int oom = 0;
    for (size_t i = 0; i < nm; i++) {
        c->rt_lib = open_runtime(ctx, majors[i], c->rt_name, sizeof c->rt_name,
                                 err, sizeof err, &oom);
        if (c->rt_lib) {
            c->rt_major = majors[i];
            break;
        }
        gp_appendf(tried, sizeof tried, "%slibcudart.so.%d", i ? ", " : "", majors[i]);
    }
    if (oom)
        return STEP_OOM;
    if (c->rt_lib)
        return bind_runtime_version(ctx, c);
    if (ctx->env_libdir_set) {
        char q[160];
        gp_quote(q, sizeof q, ctx->env_libdir, 128);
        set_cause(ctx, GPUPROBE_CUDA_NO_RUNTIME,
                  "GPUPROBE_CUDA_LIBDIR=\"%s\" holds none of %s (%s)", q, tried, err);
    } else {
        set_cause(ctx, GPUPROBE_CUDA_NO_RUNTIME,
                  "the system loader finds none of %s (%s)", tried, err);
    }
    return STEP_DECIDED;
}

/* 2. The driver library, its functions and version. */
static step load_driver(gpuprobe_context *ctx, gp_cuda *c)
{
    char err[256];
    if (open_driver(c, err, sizeof err) != 0) {
        /* The loader's message only adds to "not found" when the library
         * exists but cannot be loaded (wrong architecture, missing deps). */
        int plain = strstr(err, "No such file") != NULL ||
                    strcmp(err, "cannot open shared object file") == 0;
        set_cause(ctx, GPUPROBE_CUDA_NO_DRIVER,
                  "libcuda.so.1 was not found by the system loader%s%s%s",
                  plain ? "" : " (", plain ? "" : err, plain ? "" : ")");
        return STEP_DECIDED;
    }
    const char *missing = bind_driver(c);
    if (missing) {
        set_cause(ctx, GPUPROBE_CUDA_OTHER, "libcuda.so.1 lacks the function %s", missing);
        return STEP_DECIDED;
    }
    int v = 0;
    if (c->drv.DriverGetVersion(&v) == CUDA_SUCCESS && v > 0)
        ctx->driver_version = v;
    return STEP_ON;
}

/* 3. Driver too old for the runtime: try an older runtime the driver
 * supports before giving up (minor-version compatibility holds within a
 * major, so only majors are compared). */
static step fit_driver(gpuprobe_context *ctx, gp_cuda *c, const int *majors, size_t nm)
{
    int dmajor = ctx->driver_version / 1000;
    if (ctx->driver_version <= 0 || dmajor >= c->rt_major)
        return STEP_ON;
    char err[256];
    void *older = NULL;
    int oom = 0;
    size_t i = 0;
    for (; i < nm && !older; i++) {
        if (majors[i] > dmajor)
            continue;
        /* rt_name is overwritten only on success. */
        older = open_runtime(ctx, majors[i], c->rt_name, sizeof c->rt_name, err,
                             sizeof err, &oom);
    }
    if (oom)
        return STEP_OOM;
    if (!older) {
        too_old(ctx, "");
        return STEP_DECIDED;
    }
    dlclose(c->rt_lib); /* never initialised: only its version was read */
    c->rt_lib = older;
    c->rt_major = majors[i - 1]; /* the loop stepped past the one opened */
    return bind_runtime_version(ctx, c);
}

/* 4. Initialise the driver; when it fails, say why as closely as the
 * system shows: no kernel driver, no permission, no device, other. */
static step init_driver(gpuprobe_context *ctx, gp_cuda *c)
{
    CUresult cr = c->drv.Init(0);
    c->drv_initialized = 1;
    if (cr == CUDA_SUCCESS)
        return STEP_ON;
    char what[96], q[64];
    gp_quote(q, sizeof q, gp_cuda_drv_error_name(c, cr), 48);
    gp_snprintf(what, sizeof what, "cuInit failed with %s", q);
    /* NVML answering means the kernel driver runs, whatever the files (a
     * container may not show them). */
    const char *absent = kernel_driver_missing(ctx);
    if (absent && gp_nvml_load(&c->nvml, ctx->env_nvml_off))
        absent = NULL;
    char bad[64];
    if (absent)
        set_cause(ctx, GPUPROBE_CUDA_NO_KERNEL_DRIVER,
                  "libcuda.so.1 is installed, but %s is missing (%s)", absent, what);
    else if (device_node_denied(ctx, bad, sizeof bad))
        set_cause(ctx, GPUPROBE_CUDA_NO_PERMISSION,
                  "%s: no read/write permission on %s (add the user to the "
                  "group that owns it, often 'video' or 'render')", what, bad);
    else if (cr == CUDA_ERROR_NO_DEVICE)
        no_device(ctx, c, what);
    else
        set_cause(ctx, GPUPROBE_CUDA_OTHER, "%s", what);
    return STEP_DECIDED;
}

/* 5. Count devices through the runtime (which also checks that driver and
 * runtime agree): the last step decides. */
static void count_devices(gpuprobe_context *ctx, gp_cuda *c)
{
    int n = 0;
    cudaError_t re = c->rt.GetDeviceCount(&n);
    c->rt_initialized = 1;
    (void)c->rt.GetLastError(); /* the error is not sticky: clear it */
    if (re == cudaErrorInsufficientDriver) {
        too_old(ctx, " (cudaGetDeviceCount: cudaErrorInsufficientDriver)");
    } else if (re == cudaErrorNoDevice || (re == cudaSuccess && n <= 0)) {
        no_device(ctx, c, re == cudaSuccess ? "cudaGetDeviceCount found 0 devices"
                                            : "cudaGetDeviceCount: cudaErrorNoDevice");
    } else if (re != cudaSuccess) {
        const char *s = c->rt.GetErrorString(re);
        char en[64], es[160];
        gp_quote(en, sizeof en, gp_cuda_rt_error_name(c, re), 48);
        gp_quote(es, sizeof es, s ? s : "no description", 128);
        set_cause(ctx, GPUPROBE_CUDA_OTHER, "cudaGetDeviceCount failed with %s (%s)",
                  en, es);
    } else {
        char d[16], r[16], name[160];
        gp_format_cuda_version(d, sizeof d, ctx->driver_version);
        gp_format_cuda_version(r, sizeof r, ctx->runtime_version);
        rt_label(c, name, sizeof name);
        set_cause(ctx, GPUPROBE_CUDA_AVAILABLE,
                  "%d CUDA device(s); driver supports CUDA %s, runtime %s (%s)", n, d, r,
                  name);
    }
}

/* Why CUDA is or is not usable: the steps in order, until one decides. */
static gpuprobe_status decide(gpuprobe_context *ctx, gp_cuda *c)
{
    int majors[4];
    _Static_assert(sizeof majors / sizeof majors[0] >= 1 + sizeof known_majors / sizeof known_majors[0],
                   "room for the build's own major and every known one");
    size_t nm = runtime_majors(majors);
    step s = check_libdir(ctx);
    if (s == STEP_ON)
        s = load_runtime(ctx, c, majors, nm);
    if (s == STEP_ON)
        s = load_driver(ctx, c);
    if (s == STEP_ON)
        s = fit_driver(ctx, c, majors, nm);
    if (s == STEP_ON)
        s = init_driver(ctx, c);
    if (s == STEP_ON)
        count_devices(ctx, c);
    if (s == STEP_OOM)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "out of host memory loading the CUDA runtime");
    return GPUPROBE_OK;
}

/* The decision runs on a thread of its own, with this much stack: the
 * driver's first cuInit() and the libraries' initialisers run there, not
 * on the caller's stack, which then carries the library's frames alone
 * (on an H200 the first cuInit took 13.7 KiB beyond them; the library
 * promises its calls fit in 16 KiB, tests/test_stack.c). */
#define GP_CUDA_DECIDE_STACK ((size_t)1 << 20)

typedef struct {
    gpuprobe_context *ctx;
    gp_cuda *c;
    gpuprobe_status st;
} decide_job;

static void *decide_main(void *arg)
{
    decide_job *j = arg;
    j->st = decide(j->ctx, j->c);
    return NULL;
}

/* decide() on its own thread; on this one where no thread can be made
 * (the answer is the same, only the stack it runs on differs). */
static gpuprobe_status decide_apart(gpuprobe_context *ctx, gp_cuda *c)
{
    decide_job j = {ctx, c, GPUPROBE_OK};
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return decide(ctx, c);
    pthread_t t;
    int made = pthread_attr_setstacksize(&attr, GP_CUDA_DECIDE_STACK) == 0 &&
               pthread_create(&t, &attr, decide_main, &j) == 0;
    pthread_attr_destroy(&attr);
    if (!made)
        return decide(ctx, c);
    (void)pthread_join(t, NULL); /* a joinable thread of ours: cannot fail */
    return j.st;
}

gpuprobe_status gp_cuda_load(gpuprobe_context *ctx)
{
    if (ctx->fake)
        return GPUPROBE_OK; /* simulated devices (test seam): the cause is theirs */
    if (ctx->cuda)
        return GPUPROBE_OK; /* decided already */
    ctx->driver_version = 0;
    ctx->runtime_version = 0;
    if (ctx->env_cuda_off) {
        set_cause(ctx, GPUPROBE_CUDA_DISABLED,
                  "GPUPROBE_CUDA asks for it");
        return GPUPROBE_OK;
    }
    gp_cuda *c = calloc(1, sizeof *c);
    if (!c)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "out of memory allocating the CUDA loader state (%zu bytes)",
                       sizeof *c);
    gpuprobe_status st = decide_apart(ctx, c);
    if (st != GPUPROBE_OK) { /* out of memory: nothing decided */
        gp_cuda_unload(c);
        return st;
    }
    ctx->cuda = c; /* also marks the decision as made */
    return st;
}

gpuprobe_status gp_cuda_rt_fail(gpuprobe_context *ctx, const char *call, cudaError_t e)
{
    const gp_cuda *cu = ctx->cuda;
    if (cu->rt.GetLastError)
        (void)cu->rt.GetLastError(); /* clear a non-sticky error */
    gpuprobe_status st = e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY
                                                        : GPUPROBE_ERR_CUDA;
    return gp_fail(ctx, st, "%s failed: %s", call, gp_cuda_rt_error_name(cu, e));
}

gpuprobe_status gp_cublas_fail(gpuprobe_context *ctx, const char *call, cublasStatus_t s)
{
    gpuprobe_status st = GPUPROBE_ERR_CUDA;
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        st = GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY;
    else if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
        st = GPUPROBE_ERR_UNSUPPORTED;
    return gp_fail(ctx, st, "%s failed: %s", call, gp_cublas_status_name(ctx->cuda, s));
}

/* ---- cuBLAS -------------------------------------------------------------- */

gpuprobe_status gp_cuda_load_cublas(gpuprobe_context *ctx)
{
    gp_cuda *c = ctx->cuda;
    if (!c || !c->rt_lib || ctx->cuda_cause != GPUPROBE_CUDA_AVAILABLE)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "cannot load cuBLAS: %s",
                       ctx->cuda_detail[0] ? ctx->cuda_detail : "not loaded");
    if (c->blas_lib)
        return GPUPROBE_OK;
    char file[32];
    gp_snprintf(file, sizeof file, "libcublas.so.%d", c->rt_major);
    char *path = lib_path(ctx, file);
    if (!path)
        return errno == ENOMEM
                   ? gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                             "out of host memory loading cuBLAS")
                   : gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                             "cannot load cuBLAS: GPUPROBE_CUDA_LIBDIR is too long");
    char name[160], err[256];
    gp_quote(name, sizeof name, path, 128);
    void *h = gp_dlopen(path, RTLD_NOW | RTLD_LOCAL);
    free(path);
    if (!h) {
        gp_dlerror(err, sizeof err);
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "cannot load cuBLAS %s (matching the CUDA %d runtime): %s",
                       name, c->rt_major, err);
    }
    const char *missing = BIND(c, h, cublas_syms);
    if (missing) {
        dlclose(h);
        memset(&c->blas, 0, sizeof c->blas);
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s lacks the function %s",
                       name, missing);
    }
    if (SYM(h, "cublasGetStatusName", c->blas.GetStatusName))
        c->blas.GetStatusName = NULL; /* optional (cuBLAS < 11.4) */
    c->blas_lib = h;
    return GPUPROBE_OK;
}

void gp_cuda_unload(gp_cuda *cuda)
{
    if (!cuda)
        return;
    /* Give back the primary contexts memory queries retained: a context
     * nobody else uses is destroyed, freeing its device memory. */
    for (size_t i = 0; i < cuda->nretained; i++)
        if (cuda->drvctx.PrimaryCtxRelease)
            (void)cuda->drvctx.PrimaryCtxRelease(cuda->retained[i]);
    free(cuda->retained);
    gp_nvml_unload(&cuda->nvml);
    /* Initialised CUDA libraries run their own threads and exit handlers:
     * they stay mapped (the loader keeps them until the process exits). Only
     * libraries that were merely opened are closed. */
    if (cuda->blas_lib && !cuda->blas_initialized)
        dlclose(cuda->blas_lib);
    if (cuda->rt_lib && !cuda->rt_initialized)
        dlclose(cuda->rt_lib);
    if (cuda->drv_lib && !cuda->drv_initialized)
        dlclose(cuda->drv_lib);
    free(cuda);
}

gp_nvml *gp_cuda_nvml(gpuprobe_context *ctx, const char **why)
{
    if (!ctx->cuda) {
        if (why)
            *why = "CUDA is not loaded";
        return NULL;
    }
    gp_nvml *n = &ctx->cuda->nvml;
    if (gp_nvml_load(n, ctx->env_nvml_off))
        return n;
    if (why)
        *why = n->why;
    return NULL;
}

