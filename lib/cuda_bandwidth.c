/*
 * cuda_bandwidth.c - the CUDA backend of the bandwidth measurement, behind
 * the table of operations of bandwidth_internal.h (the protocol is
 * bandwidth.c's). No kernel of our own: the read is cuBLAS's dot product
 * of two device buffers (device pointer mode, so calls queue back to back
 * without a copy of the result to the host), the copies are the runtime's
 * cudaMemcpyAsync, all on a non-blocking stream the run creates, timed with
 * two CUDA events on it. Built only with CUDA support (no_cuda_bandwidth.c
 * otherwise).
 *
 * Per run, inside the device's primary context (entered at open, left at
 * release): the stream, a cuBLAS handle, two events; device buffers x and
 * y and the dot product's result; a pinned host buffer (cudaMallocHost)
 * and a pageable one (malloc) when a transfer test asks for them. Every
 * buffer holds the byte 0x3F (the float 0.7476...), so every copy keeps
 * it and the dot product of x and y is n times its square, which finish()
 * checks. The peaks come from NVML: the memory's bus width and maximum
 * clock, the PCIe link's maximum generation and width at open, and its
 * current ones while the pinned host-to-device copies run (read between
 * queueing them and waiting for them).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bandwidth_internal.h"
#include "cuda_loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Device memory left beyond the buffers: cuBLAS's workspace (32 MiB per
 * handle on Hopper) and the result. */
#define GP_BW_DEVICE_HEADROOM ((uint64_t)64 << 20)
/* The byte every buffer is filled with, and the float it makes. */
#define GP_BW_FILL 0x3F

typedef struct cuda_bw {
    const gp_device *dev;
    int entered;
    cudaStream_t stream;
    cublasHandle_t handle;
    cudaEvent_t ev[2];
    size_t nev;
    int blas_version;
    void *x, *y;               /* device */
    float *result;             /* device: the dot product */
    void *pinned, *pageable;   /* host */
    size_t bytes;
    unsigned ran;              /* tests that have run */
    /* NVML: the handle of the device's GPU, and the best link readings
     * under load (-1 none) */
    struct gp_nvml *nvml;
    void *gpu;
    int gen, width;
} cuda_bw;

#define CK_RT(call, expr)                                                     \
    do {                                                                      \
        cudaError_t e_ = (expr);                                              \
        if (e_ != cudaSuccess)                                                \
            return gp_cuda_rt_fail(ctx, call, e_);                            \
    } while (0)

#define CK_BLAS(call, expr)                                                   \
    do {                                                                      \
        cublasStatus_t s_ = (expr);                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                      \
            return gp_cublas_fail(ctx, call, s_);                             \
    } while (0)

static int wants(const gp_bw_job *job, gpuprobe_bandwidth_test a, gpuprobe_bandwidth_test b)
{
    return (job->tests & (GP_BW_BIT(a) | GP_BW_BIT(b))) != 0;
}

/* ---- open ------------------------------------------------------------------ */

/* An NVML integer of the GPU; -1 when NVML cannot say. */
static int64_t nvml_int(const cuda_bw *r, gp_nvml_query q)
{
    int64_t v = -1;
    const char *call;
    if (!r->nvml || !r->gpu || gp_nvml_query_int(r->nvml, r->gpu, q, &v, &call) != GP_NVML_SUCCESS)
        return -1;
    return v;
}

/* The memory's theoretical rate: NVML's maximum memory clock and bus
 * width, else the CUDA device attributes (the current clock). */
static void memory_peak(cuda_bw *r, gp_bw_job *job, const char *nvml_why)
{
    int64_t bus = nvml_int(r, GP_NVML_MEMORY_BUS_WIDTH);
    int64_t mhz = nvml_int(r, GP_NVML_MAX_MEMORY_CLOCK);
    const char *src = "NVML", *clock = "maximum";
    if (bus <= 0 || mhz <= 0) {
        bus = r->dev->memory_bus_bits;
        mhz = r->dev->memory_clock_khz / 1000;
        src = "the CUDA device attributes";
        clock = "reported";
    }
    job->memory_peak_gbps = gp_bw_gpu_memory_gbps(bus, mhz);
    if (job->memory_peak_gbps > 0)
        gp_snprintf(job->peak_source, sizeof job->peak_source,
                    "%s: %lld-bit bus x %lld MHz %s memory clock x 2 transfers per clock",
                    src, (long long)bus, (long long)mhz, clock);
    else
        gp_snprintf(job->peak_source, sizeof job->peak_source,
                    "none: NVML gives no memory bus width or clock (%s), nor does CUDA",
                    nvml_why ? nvml_why : "NVML did not answer");
}

/* Stream, handle (on the stream, device pointer mode), events. */
static gpuprobe_status make_stream(gpuprobe_context *ctx, cuda_bw *r)
{
    const gp_cuda *cu = ctx->cuda;
    cudaStream_t stream = NULL;
    CK_RT("cudaStreamCreateWithFlags", cu->rt.StreamCreateWithFlags(&stream,
                                                                    cudaStreamNonBlocking));
    r->stream = stream; /* only once it exists */
    cublasStatus_t s = cu->blas.Create(&r->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        r->handle = NULL; /* not created, whatever the call wrote */
        return gp_cublas_fail(ctx, "cublasCreate", s);
    }
    ctx->cuda->blas_initialized = 1; /* cuBLAS now has state: never unload it */
    CK_BLAS("cublasSetStream", cu->blas.SetStream(r->handle, r->stream));
    CK_BLAS("cublasSetPointerMode", cu->blas.SetPointerMode(r->handle,
                                                            CUBLAS_POINTER_MODE_DEVICE));
    CK_BLAS("cublasGetVersion", cu->blas.GetVersion(r->handle, &r->blas_version));
    for (; r->nev < 2; r->nev++)
        CK_RT("cudaEventCreate", cu->rt.EventCreate(&r->ev[r->nev]));
    return GPUPROBE_OK;
}

/* The L2 cache and the device memory the buffers may take. */
static gpuprobe_status describe_device(gpuprobe_context *ctx, cuda_bw *r, gp_bw_job *job)
{
    const gp_cuda *cu = ctx->cuda;
    int l2 = 0;
    if (cu->rt.DeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, r->dev->cuda_index) != cudaSuccess) {
        (void)cu->rt.GetLastError();
        l2 = 0; /* unknown: the rule's 1 GiB then */
    }
    job->cache_bytes = l2 > 0 ? (uint64_t)l2 : 0;
    size_t free_b = 0, total_b = 0;
    CK_RT("cudaMemGetInfo", cu->rt.MemGetInfo(&free_b, &total_b));
    /* What allocations can get (whole pages, less the driver's allowance,
     * as capacity counts it), less the headroom. */
    gp_memory mem;
    memset(&mem, 0, sizeof mem);
    mem.total = mem.physical = total_b;
    mem.available = free_b;
    job->device_room = gp_alloc_room(r->dev, &mem, GP_BW_DEVICE_HEADROOM);
    job->device_buffers = 2;
    job->host_buffers = wants(job, GPUPROBE_BANDWIDTH_TEST_H2D_PINNED,
                              GPUPROBE_BANDWIDTH_TEST_D2H_PINNED) +
                        wants(job, GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE,
                              GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE);
    job->extra_space = 0;
    job->threads = job->pinned = 0;
    const char *why = NULL;
    r->nvml = gp_cuda_nvml(ctx, &why);
    r->gpu = r->dev->nvml_gpu ? r->dev->nvml_gpu : r->dev->nvml;
    memory_peak(r, job, why);
    job->pcie_max_gen = (int)nvml_int(r, GP_NVML_PCIE_MAX_GEN);
    job->pcie_max_width = (int)nvml_int(r, GP_NVML_PCIE_MAX_WIDTH);
    gp_snprintf(job->method, sizeof job->method,
                "cuBLAS %d.%d.%d cublasSdot_v2 (read), cudaMemcpyAsync (copies; pinned host "
                "memory from cudaMallocHost, pageable from malloc), timed with CUDA events on "
                "the library's own stream",
                r->blas_version / 10000, (r->blas_version / 100) % 100, r->blas_version % 100);
    return GPUPROBE_OK;
}

static gpuprobe_status cuda_release(gpuprobe_context *ctx, void *state, gpuprobe_status st);

static gpuprobe_status cuda_open(gpuprobe_context *ctx, gp_bw_job *job, void **state)
{
    const gp_device *dev = job->dev;
    if (ctx->fake)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "%s (%s) is a simulated CUDA device (test seam); a bandwidth run "
                       "needs a real one", dev->spec, dev->name);
    gpuprobe_status st = gp_cuda_load_cublas(ctx);
    if (st != GPUPROBE_OK)
        return st;
    cuda_bw *r = calloc(1, sizeof *r);
    if (!r)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the bandwidth state");
    r->dev = dev;
    r->gen = r->width = -1;
    st = gp_cuda_enter(ctx, dev);
    if (st != GPUPROBE_OK) {
        free(r);
        return st;
    }
    r->entered = 1;
    st = make_stream(ctx, r);
    if (st == GPUPROBE_OK)
        st = describe_device(ctx, r, job);
    if (st != GPUPROBE_OK)
        return cuda_release(ctx, r, st);
    *state = r;
    return GPUPROBE_OK;
}

/* ---- prepare ------------------------------------------------------------------ */

static gpuprobe_status host_buffers(gpuprobe_context *ctx, cuda_bw *r, const gp_bw_job *job)
{
    const gp_cuda *cu = ctx->cuda;
    if (wants(job, GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, GPUPROBE_BANDWIDTH_TEST_D2H_PINNED)) {
        cudaError_t e = cu->rt.MallocHost(&r->pinned, r->bytes);
        if (e != cudaSuccess) {
            r->pinned = NULL;
            (void)cu->rt.GetLastError();
            return gp_fail(ctx, e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_OUT_OF_MEMORY
                                                               : GPUPROBE_ERR_CUDA,
                           "cudaMallocHost of %zu bytes of pinned host memory failed: %s",
                           r->bytes, gp_cuda_rt_error_name(cu, e));
        }
        memset(r->pinned, GP_BW_FILL, r->bytes);
    }
    if (wants(job, GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE, GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE)) {
        r->pageable = malloc(r->bytes);
        if (!r->pageable)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "allocating %zu bytes of pageable host memory", r->bytes);
        memset(r->pageable, GP_BW_FILL, r->bytes); /* its pages exist before a copy */
    }
    return GPUPROBE_OK;
}

static gpuprobe_status cuda_prepare(gpuprobe_context *ctx, void *state, gp_bw_job *job)
{
    const gp_cuda *cu = ctx->cuda;
    cuda_bw *r = state;
    r->bytes = (size_t)job->buffer_bytes;
    if (r->bytes / sizeof(float) > (size_t)INT32_MAX)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "bandwidth on %s: buffers of %zu bytes hold more floats than "
                       "cublasSdot counts (an int)", r->dev->spec, r->bytes);
    void **dev[3] = {&r->x, &r->y, (void **)&r->result};
    size_t size[3] = {r->bytes, r->bytes, 256};
    for (int i = 0; i < 3; i++) {
        cudaError_t e = cu->rt.Malloc(dev[i], size[i]);
        if (e != cudaSuccess) {
            *dev[i] = NULL;
            (void)cu->rt.GetLastError();
            return gp_fail(ctx, e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY
                                                               : GPUPROBE_ERR_CUDA,
                           "cudaMalloc of %zu bytes on %s failed: %s", size[i], r->dev->spec,
                           gp_cuda_rt_error_name(cu, e));
        }
    }
    CK_RT("cudaMemsetAsync", cu->rt.MemsetAsync(r->x, GP_BW_FILL, r->bytes, r->stream));
    CK_RT("cudaMemsetAsync", cu->rt.MemsetAsync(r->y, GP_BW_FILL, r->bytes, r->stream));
    CK_RT("cudaStreamSynchronize", cu->rt.StreamSynchronize(r->stream));
    return host_buffers(ctx, r, job);
}

/* ---- passes ----------------------------------------------------------------------- */

/* Queue one repetition of test t. */
static gpuprobe_status queue(gpuprobe_context *ctx, const cuda_bw *r, gpuprobe_bandwidth_test t)
{
    const gp_cuda *cu = ctx->cuda;
    if (t == GPUPROBE_BANDWIDTH_TEST_READ) {
        int n = (int)(r->bytes / sizeof(float));
        CK_BLAS("cublasSdot", cu->blas.Sdot(r->handle, n, r->x, 1, r->y, 1, r->result));
        return GPUPROBE_OK;
    }
    static const struct {
        enum cudaMemcpyKind kind;
        int to_host, pinned;
    } how[GP_BW_NTESTS] = {
        [GPUPROBE_BANDWIDTH_TEST_COPY] = {cudaMemcpyDeviceToDevice, 0, 0},
        [GPUPROBE_BANDWIDTH_TEST_H2D_PINNED] = {cudaMemcpyHostToDevice, 0, 1},
        [GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE] = {cudaMemcpyHostToDevice, 0, 0},
        [GPUPROBE_BANDWIDTH_TEST_D2H_PINNED] = {cudaMemcpyDeviceToHost, 1, 1},
        [GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE] = {cudaMemcpyDeviceToHost, 1, 0},
    };
    void *host = how[t].pinned ? r->pinned : r->pageable;
    void *dst = t == GPUPROBE_BANDWIDTH_TEST_COPY ? r->y : how[t].to_host ? host : r->x;
    const void *src = t == GPUPROBE_BANDWIDTH_TEST_COPY || how[t].to_host ? r->x : host;
    CK_RT("cudaMemcpyAsync", cu->rt.MemcpyAsync(dst, src, r->bytes, how[t].kind, r->stream));
    return GPUPROBE_OK;
}

/* The link as the copies just queued run: the best reading is kept. */
static void read_link(cuda_bw *r)
{
    int gen = (int)nvml_int(r, GP_NVML_PCIE_GEN), width = (int)nvml_int(r, GP_NVML_PCIE_WIDTH);
    if (gen > r->gen)
        r->gen = gen;
    if (width > r->width)
        r->width = width;
}

static gpuprobe_status cuda_pass(gpuprobe_context *ctx, void *state, gpuprobe_bandwidth_test t,
                                 size_t reps, double *seconds)
{
    const gp_cuda *cu = ctx->cuda;
    cuda_bw *r = state;
    CK_RT("cudaEventRecord", cu->rt.EventRecord(r->ev[0], r->stream));
    for (size_t i = 0; i < reps; i++) {
        gpuprobe_status st = queue(ctx, r, t);
        if (st != GPUPROBE_OK)
            return st;
    }
    CK_RT("cudaEventRecord", cu->rt.EventRecord(r->ev[1], r->stream));
    if (t == GPUPROBE_BANDWIDTH_TEST_H2D_PINNED)
        read_link(r);
    CK_RT("cudaEventSynchronize", cu->rt.EventSynchronize(r->ev[1]));
    float ms = 0.0f;
    CK_RT("cudaEventElapsedTime", cu->rt.EventElapsedTime(&ms, r->ev[0], r->ev[1]));
    *seconds = (double)ms / 1000.0;
    r->ran |= GP_BW_BIT(t);
    return GPUPROBE_OK;
}

/* ---- finish, release --------------------------------------------------------------- */

static gpuprobe_status cuda_finish(gpuprobe_context *ctx, void *state, gp_bw_job *job)
{
    const gp_cuda *cu = ctx->cuda;
    cuda_bw *r = state;
    job->pcie_gen = r->gen;
    job->pcie_width = r->width;
    if (!(r->ran & GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_READ)))
        return GPUPROBE_OK;
    float got = NAN;
    CK_RT("cudaMemcpyAsync", cu->rt.MemcpyAsync(&got, r->result, sizeof got,
                                                cudaMemcpyDeviceToHost, r->stream));
    CK_RT("cudaStreamSynchronize", cu->rt.StreamSynchronize(r->stream));
    float v;
    memset(&v, GP_BW_FILL, sizeof v);
    double n = (double)(r->bytes / sizeof(float)), want = n * (double)v * (double)v;
    if (!(fabs((double)got - want) <= 1e-3 * want))
        return gp_fail(ctx, GPUPROBE_ERR_VERIFY_FAILED,
                       "bandwidth on %s: cublasSdot of %.0f elements gave %.9g, expected %.9g",
                       r->dev->spec, n, (double)got, want);
    return GPUPROBE_OK;
}

static void free_all(const gp_cuda *cu, cuda_bw *r)
{
    void *dev[3] = {r->x, r->y, r->result};
    for (int i = 0; i < 3; i++)
        if (dev[i])
            (void)cu->rt.Free(dev[i]);
    if (r->pinned)
        (void)cu->rt.FreeHost(r->pinned);
    free(r->pageable);
    for (size_t i = 0; i < r->nev; i++)
        (void)cu->rt.EventDestroy(r->ev[i]);
    if (r->handle)
        (void)cu->blas.Destroy(r->handle);
    if (r->stream)
        (void)cu->rt.StreamDestroy(r->stream);
}

static gpuprobe_status cuda_release(gpuprobe_context *ctx, void *state, gpuprobe_status st)
{
    cuda_bw *r = state;
    const gp_cuda *cu = ctx->cuda;
    if (st != GPUPROBE_OK && r->stream) {
        /* Work may still be queued: let it finish before its buffers go. */
        (void)cu->rt.StreamSynchronize(r->stream);
        (void)cu->rt.GetLastError();
    }
    free_all(cu, r);
    gpuprobe_status lst = r->entered ? gp_cuda_leave(ctx, r->dev) : GPUPROBE_OK;
    free(r);
    return st != GPUPROBE_OK ? st : lst;
}

const gp_bw_backend gp_cuda_bw_backend = {
    .tests = GP_BW_CUDA_TESTS,
    .read_buffers = 2,
    .open = cuda_open,
    .prepare = cuda_prepare,
    .pass = cuda_pass,
    .finish = cuda_finish,
    .release = cuda_release,
};
