/*
 * cuda_matmul.c - the CUDA backend of the timed matmul: cublasGemmEx on the
 * library's own stream, timed with CUDA events.
 *
 * Per context, one non-blocking stream, one cuBLAS handle and a pool of
 * events per CUDA device, created at the first matmul on that device and
 * kept (in ctx->blas) until gpuprobe_context_destroy().
 *
 * Precisions (all with fp32 accumulation, alpha/beta fp32):
 *   fp32  A, B, C CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH: no
 *         TF32 (since CUDA 11 the default math mode never uses it; the
 *         verification tolerance would catch it, see matmul.c);
 *   tf32  A, B, C CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores);
 *   fp16  A, B CUDA_R_16F,  C CUDA_R_32F, CUBLAS_COMPUTE_32F;
 *   bf16  A, B CUDA_R_16BF, C CUDA_R_32F, CUBLAS_COMPUTE_32F.
 * C is fp32 for fp16/bf16 (a combination cublasGemmEx supports): the
 * tensor cores accumulate in fp32 either way, and keeping C in fp32 means
 * verification measures the computation rather than a final rounding to 16
 * bits; the extra bytes written (m x n x 2) are negligible next to the
 * 2 m n k FLOP at the sizes benchmarked.
 *
 * Row-major: C = A B (row-major) is C^T = B^T A^T in cuBLAS's column-major
 * terms, and a row-major matrix is its transpose column-major. So the call
 * is gemm(N, N, n, m, k, B, ldb = n, A, lda = k, C, ldc = n).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "matmul_internal.h"
#include "cuda_loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUPROBE_HAVE_CUDA

void gp_cuda_blas_release(gpuprobe_context *ctx)
{
    (void)ctx;
}

gpuprobe_status gp_cuda_matmul(gpuprobe_context *ctx, gp_mm_job *job)
{
    (void)job;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                   "%s", gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NOT_BUILT));
}

#else /* GPUPROBE_HAVE_CUDA */

/* Headroom left on the device beyond A, B and C: cuBLAS's workspace
 * (up to 32 MiB per handle on Hopper) and its kernels' own needs. */
#define GP_DEVICE_HEADROOM ((size_t)64 << 20)

typedef struct gp_blas_dev {
    int cuda_index;
    cudaStream_t stream;
    cublasHandle_t handle;
    int version;             /* cublasGetVersion: major*10000+minor*100+patch */
    cudaEvent_t *events;
    size_t nevents;
} gp_blas_dev;

struct gp_cuda_blas {
    gp_blas_dev *dev;
    size_t ndev;
};

static void dev_release(const gp_cuda *cu, gp_blas_dev *d)
{
    for (size_t i = 0; i < d->nevents; i++)
        cu->rt.EventDestroy(d->events[i]);
    free(d->events);
    d->events = NULL;
    d->nevents = 0;
    if (d->handle)
        cu->blas.Destroy(d->handle);
    d->handle = NULL;
    if (d->stream)
        cu->rt.StreamDestroy(d->stream);
    d->stream = NULL;
}

void gp_cuda_blas_release(gpuprobe_context *ctx)
{
    if (!ctx || !ctx->blas)
        return;
    struct gp_cuda_blas *b = ctx->blas;
    const gp_cuda *cu = ctx->cuda;
    if (cu && b->ndev) {
        for (size_t i = 0; i < b->ndev; i++) {
            /* Handles and streams belong to their device's context: make
             * it current (pushed) while they are destroyed. */
            size_t di = (size_t)b->dev[i].cuda_index + 1;
            int pushed = di < ctx->ndevices &&
                         gp_cuda_enter(ctx, &ctx->devices[di]) == GPUPROBE_OK;
            dev_release(cu, &b->dev[i]); /* best effort even if not pushed */
            if (pushed)
                (void)gp_cuda_leave(ctx, &ctx->devices[di]);
        }
    }
    free(b->dev);
    free(b);
    ctx->blas = NULL;
}

static const char *rt_name(const gp_cuda *cu, cudaError_t e)
{
    return gp_cuda_rt_error_name(cu, e);
}

static gpuprobe_status rt_fail(gpuprobe_context *ctx, const char *call,
                               cudaError_t e)
{
    const gp_cuda *cu = ctx->cuda;
    if (cu->rt.GetLastError)
        (void)cu->rt.GetLastError(); /* clear a non-sticky error */
    gpuprobe_status st = e == cudaErrorMemoryAllocation
                             ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY
                             : GPUPROBE_ERR_CUDA;
    return gp_fail(ctx, st, "%s failed: %s", call, rt_name(cu, e));
}

static gpuprobe_status blas_fail(gpuprobe_context *ctx, const char *call,
                                 cublasStatus_t s)
{
    gpuprobe_status st = GPUPROBE_ERR_CUDA;
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        st = GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY;
    else if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
        st = GPUPROBE_ERR_UNSUPPORTED;
    return gp_fail(ctx, st, "%s failed: %s", call,
                   gp_cublas_status_name(ctx->cuda, s));
}

/* The per-device state for the current device, created on first use. */
static gpuprobe_status get_dev(gpuprobe_context *ctx, int cuda_index,
                               gp_blas_dev **out)
{
    gp_cuda *cu = ctx->cuda;
    if (!ctx->blas) {
        ctx->blas = calloc(1, sizeof *ctx->blas);
        if (!ctx->blas)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "allocating the cuBLAS state");
    }
    struct gp_cuda_blas *b = ctx->blas;
    for (size_t i = 0; i < b->ndev; i++)
        if (b->dev[i].cuda_index == cuda_index) {
            *out = &b->dev[i];
            return GPUPROBE_OK;
        }

    gp_blas_dev d;
    memset(&d, 0, sizeof d);
    d.cuda_index = cuda_index;
    cudaError_t e = cu->rt.StreamCreateWithFlags(&d.stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        d.stream = NULL;
        return rt_fail(ctx, "cudaStreamCreateWithFlags", e);
    }
    cublasStatus_t s = cu->blas.Create(&d.handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        d.handle = NULL;
        dev_release(cu, &d);
        return blas_fail(ctx, "cublasCreate", s);
    }
    ctx->cuda->blas_initialized = 1; /* cuBLAS now has state: never unload it */
    s = cu->blas.SetStream(d.handle, d.stream);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cu->blas.GetVersion(d.handle, &d.version);
    if (s != CUBLAS_STATUS_SUCCESS) {
        dev_release(cu, &d);
        return blas_fail(ctx, "cublasSetStream/cublasGetVersion", s);
    }
    gp_blas_dev *grown = realloc(b->dev, (b->ndev + 1) * sizeof *grown);
    if (!grown) {
        dev_release(cu, &d);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating the cuBLAS state");
    }
    b->dev = grown;
    b->dev[b->ndev] = d;
    *out = &b->dev[b->ndev++];
    return GPUPROBE_OK;
}

/* Make sure the device's event pool holds at least `count` events. */
static gpuprobe_status need_events(gpuprobe_context *ctx, gp_blas_dev *d,
                                   size_t count)
{
    if (d->nevents >= count)
        return GPUPROBE_OK;
    const gp_cuda *cu = ctx->cuda;
    cudaEvent_t *grown = realloc(d->events, count * sizeof *grown);
    if (!grown)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating %zu CUDA events", count);
    d->events = grown;
    while (d->nevents < count) {
        cudaError_t e = cu->rt.EventCreate(&d->events[d->nevents]);
        if (e != cudaSuccess)
            return rt_fail(ctx, "cudaEventCreate", e);
        d->nevents++;
    }
    return GPUPROBE_OK;
}

typedef struct gemm_call {
    cudaDataType ab_type, c_type;
    cublasComputeType_t compute;
    const char *ab_name, *c_name, *compute_name;
    int m, n, k;
    const void *dA, *dB;
    void *dC;
} gemm_call;

static cublasStatus_t gemm(const gp_cuda *cu, const gp_blas_dev *d,
                           const gemm_call *g)
{
    static const float one = 1.0f, zero = 0.0f;
    /* Row-major C = A B as column-major C^T = B^T A^T (see the top). */
    return cu->blas.GemmEx(d->handle, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->m,
                           g->k, &one, g->dB, g->ab_type, g->n, g->dA,
                           g->ab_type, g->k, &zero, g->dC, g->c_type, g->n,
                           g->compute, CUBLAS_GEMM_DEFAULT);
}

/* Elapsed seconds between two recorded events. */
static gpuprobe_status elapsed(gpuprobe_context *ctx, cudaEvent_t a,
                               cudaEvent_t b, double *s)
{
    float ms = 0.0f;
    cudaError_t e = ctx->cuda->rt.EventElapsedTime(&ms, a, b);
    if (e != cudaSuccess)
        return rt_fail(ctx, "cudaEventElapsedTime", e);
    *s = (double)ms / 1000.0;
    return GPUPROBE_OK;
}

/* Buffers of one run; freed by release_buffers on every path. */
typedef struct bufs {
    void *hA, *hB, *hC; /* pinned host */
    void *dA, *dB, *dC; /* device */
} bufs;

static void release_buffers(const gp_cuda *cu, bufs *b)
{
    if (b->dA) cu->rt.Free(b->dA);
    if (b->dB) cu->rt.Free(b->dB);
    if (b->dC) cu->rt.Free(b->dC);
    if (b->hA) cu->rt.FreeHost(b->hA);
    if (b->hB) cu->rt.FreeHost(b->hB);
    if (b->hC) cu->rt.FreeHost(b->hC);
    memset(b, 0, sizeof *b);
}

#define CK_RT(call, expr)                                                     \
    do {                                                                      \
        cudaError_t e_ = (expr);                                              \
        if (e_ != cudaSuccess) {                                              \
            st = rt_fail(ctx, call, e_);                                      \
            goto out;                                                         \
        }                                                                     \
    } while (0)

#define CK_BLAS(call, expr)                                                   \
    do {                                                                      \
        cublasStatus_t s_ = (expr);                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                    \
            st = blas_fail(ctx, call, s_);                                    \
            goto out;                                                         \
        }                                                                     \
    } while (0)

#define CK(expr)                                                              \
    do {                                                                      \
        st = (expr);                                                          \
        if (st != GPUPROBE_OK)                                                \
            goto out;                                                         \
    } while (0)

static void describe(gp_mm_job *job, const gp_blas_dev *d, const gemm_call *g)
{
    gp_snprintf(job->backend, sizeof job->backend,
                "cuBLAS %d.%d.%d (cublasGemmEx, A/B %s, C %s)",
                d->version / 10000, (d->version / 100) % 100, d->version % 100,
                g->ab_name, g->c_name);
    gp_strlcpy(job->compute_type, g->compute_name, sizeof job->compute_type);
    /* Environment variables that change what cuBLAS does behind the math
     * mode are named in the report (read only for reporting). */
    const char *tf32 = gp_getenv("NVIDIA_TF32_OVERRIDE");
    const char *emu = gp_getenv("CUBLAS_EMULATE_SINGLE_PRECISION");
    char qt[12] = "", qe[12] = "";
    if (tf32)
        gp_quote(qt, sizeof qt, tf32, 8);
    if (emu)
        gp_quote(qe, sizeof qe, emu, 8);
    gp_snprintf(job->math_mode, sizeof job->math_mode, "CUBLAS_DEFAULT_MATH%s%s%s%s",
                tf32 ? "; NVIDIA_TF32_OVERRIDE=" : "", qt,
                emu ? "; CUBLAS_EMULATE_SINGLE_PRECISION=" : "", qe);
}

gpuprobe_status gp_cuda_matmul(gpuprobe_context *ctx, gp_mm_job *job)
{
    const gp_device *dev = job->dev;
    double setup0 = gp_now();

    gpuprobe_status st = gp_cuda_load(ctx);
    if (st != GPUPROBE_OK)
        return st;
    if (ctx->fake)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "%s (%s) is a simulated CUDA device (test seam); a "
                       "matmul needs a real one",
                       dev->spec, dev->name);
    if (ctx->cuda_cause != GPUPROBE_CUDA_AVAILABLE || !ctx->cuda)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "%s%s%s",
                       gpuprobe_cuda_cause_string(ctx->cuda_cause),
                       ctx->cuda_detail[0] ? ": " : "", ctx->cuda_detail);
    if (!ctx->cuda->blas_lib) {
        st = gp_cuda_load_cublas(ctx);
        if (st != GPUPROBE_OK)
            return st;
    }
    const gp_cuda *cu = ctx->cuda;

    gemm_call g;
    memset(&g, 0, sizeof g);
    g.m = (int)job->m;
    g.n = (int)job->n;
    g.k = (int)job->k;
    g.c_type = CUDA_R_32F;
    g.c_name = "CUDA_R_32F";
    g.compute = CUBLAS_COMPUTE_32F;
    g.compute_name = "CUBLAS_COMPUTE_32F";
    gp_elem ein = GP_ELEM_F32;
    switch (job->dtype) {
    case GPUPROBE_DTYPE_FP32:
        g.ab_type = CUDA_R_32F;
        g.ab_name = "CUDA_R_32F";
        break;
    case GPUPROBE_DTYPE_TF32:
        g.ab_type = CUDA_R_32F;
        g.ab_name = "CUDA_R_32F";
        g.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
        g.compute_name = "CUBLAS_COMPUTE_32F_FAST_TF32";
        break;
    case GPUPROBE_DTYPE_FP16:
        g.ab_type = CUDA_R_16F;
        g.ab_name = "CUDA_R_16F";
        ein = GP_ELEM_F16;
        break;
    case GPUPROBE_DTYPE_BF16:
        g.ab_type = CUDA_R_16BF;
        g.ab_name = "CUDA_R_16BF";
        ein = GP_ELEM_BF16;
        break;
    default:
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "matmul in %s is not done on CUDA devices",
                       gpuprobe_dtype_name(job->dtype));
    }
    size_t es = gp_elem_size(ein), ba, bb, bc;
    if (gp_mm_bytes(job->m, job->k, es, &ba) || gp_mm_bytes(job->k, job->n, es, &bb) ||
        gp_mm_bytes(job->m, job->n, 4, &bc) || ba > SIZE_MAX - bb ||
        ba + bb > SIZE_MAX - bc - GP_DEVICE_HEADROOM)
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW, "matmul buffers overflow size_t");

    bufs b;
    memset(&b, 0, sizeof b);
    /* The device's primary context, pushed for this call only: the
     * thread's current context/device are left as they were, and no other
     * device gets a context. From here on, every exit goes through `out`:
     * buffers freed, the context popped. */
    st = gp_cuda_enter(ctx, dev);
    if (st != GPUPROBE_OK)
        return st;
    cudaError_t e;

    gp_blas_dev *d = NULL;
    CK(get_dev(ctx, dev->cuda_index, &d));
    CK_BLAS("cublasSetMathMode", cu->blas.SetMathMode(d->handle, CUBLAS_DEFAULT_MATH));
    describe(job, d, &g);
    job->threads = 0;

    size_t free_b = 0, total_b = 0;
    CK_RT("cudaMemGetInfo", cu->rt.MemGetInfo(&free_b, &total_b));
    if (ba + bb + bc + GP_DEVICE_HEADROOM > free_b) {
        st = gp_fail(ctx, GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY,
                     "matmul %dx%dx%d %s needs %zu bytes (%.1f MiB) of device "
                     "memory for A, B and C plus %zu MiB for cuBLAS, but %s "
                     "has %zu bytes (%.1f MiB) free of %zu",
                     g.m, g.n, g.k, gpuprobe_dtype_name(job->dtype),
                     ba + bb + bc, (double)(ba + bb + bc) / 1048576.0,
                     GP_DEVICE_HEADROOM >> 20, dev->spec, free_b,
                     (double)free_b / 1048576.0, total_b);
        goto out;
    }

    /* Pinned host buffers: transfers at full bus speed, and truly async. */
    e = cu->rt.MallocHost(&b.hA, ba);
    if (e == cudaSuccess) e = cu->rt.MallocHost(&b.hB, bb);
    if (e == cudaSuccess) e = cu->rt.MallocHost(&b.hC, bc);
    if (e != cudaSuccess) {
        (void)cu->rt.GetLastError();
        st = gp_fail(ctx, e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_OUT_OF_MEMORY
                                                         : GPUPROBE_ERR_CUDA,
                     "cudaMallocHost of pinned host buffers (%zu + %zu + %zu "
                     "bytes) failed: %s",
                     ba, bb, bc, rt_name(cu, e));
        goto out;
    }
    gp_fill_random(b.hA, ein, ba / es, job->seed, 1);
    gp_fill_random(b.hB, ein, bb / es, job->seed, 2);

    e = cu->rt.Malloc(&b.dA, ba);
    if (e == cudaSuccess) e = cu->rt.Malloc(&b.dB, bb);
    if (e == cudaSuccess) e = cu->rt.Malloc(&b.dC, bc);
    if (e != cudaSuccess) {
        (void)cu->rt.GetLastError();
        st = gp_fail(ctx, e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY
                                                         : GPUPROBE_ERR_CUDA,
                     "cudaMalloc of A, B and C (%zu + %zu + %zu bytes) on %s "
                     "failed: %s",
                     ba, bb, bc, dev->spec, rt_name(cu, e));
        goto out;
    }
    g.dA = b.dA;
    g.dB = b.dB;
    g.dC = b.dC;

    /* Events: 2 for a transfer, then per batch one more than its runs. */
    size_t max_runs = (size_t)job->max_runs;
    CK(need_events(ctx, d, max_runs + 1 > 2 ? max_runs + 1 : 2));
    cudaEvent_t *ev = d->events;

    /* Poison C (0xFFFFFFFF is an fp32 NaN) before any run. */
    CK_RT("cudaMemsetAsync", cu->rt.MemsetAsync(b.dC, 0xFF, bc, d->stream));
    CK_RT("cudaStreamSynchronize", cu->rt.StreamSynchronize(d->stream));
    double setup_s = gp_now() - setup0;

    /* Host to device, timed apart when TRANSFERS is on. */
    double t_h2d = gp_now();
    CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[0], d->stream));
    CK_RT("cudaMemcpyAsync", cu->rt.MemcpyAsync(b.dA, b.hA, ba, cudaMemcpyHostToDevice, d->stream));
    CK_RT("cudaMemcpyAsync", cu->rt.MemcpyAsync(b.dB, b.hB, bb, cudaMemcpyHostToDevice, d->stream));
    CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[1], d->stream));
    CK_RT("cudaEventSynchronize", cu->rt.EventSynchronize(ev[1]));
    if (job->transfers)
        CK(elapsed(ctx, ev[0], ev[1], &job->h2d_s));
    else
        setup_s += gp_now() - t_h2d; /* untimed copies count as setup */

    /* Warm-up (first-call kernel loading happens here): part of setup. */
    double t_warm = gp_now();
    for (int64_t w = 0; w < job->warmup; w++)
        CK_BLAS("cublasGemmEx", gemm(cu, d, &g));
    CK_RT("cudaStreamSynchronize", cu->rt.StreamSynchronize(d->stream));
    job->setup_s = setup_s + (gp_now() - t_warm);

    /* Timed runs, in batches enqueued back to back with an event between
     * runs, so no host launch gap falls inside a measurement; each batch
     * starts with one untimed run so the GPU is already busy when the first
     * start event is recorded. At least MIN_RUNS; then, while BUDGET_MS of
     * wall time since the first batch lasts, batches sized from the mean
     * run time so far; at most MAX_RUNS. */
    size_t min_runs = (size_t)job->min_runs, done = 0;
    double budget = (double)job->budget_ms / 1000.0, first = gp_now();
    while (done < min_runs ||
           (done < max_runs && gp_now() - first < budget)) {
        size_t batch;
        if (done < min_runs) {
            batch = min_runs - done;
        } else {
            double mean = gp_stats_mean(job->times, done);
            double left = budget - (gp_now() - first);
            double want = mean > 0 ? ceil(left / mean) : 1.0;
            batch = want < 1.0 ? 1 : want > (double)(max_runs - done)
                                         ? max_runs - done
                                         : (size_t)want;
        }
        CK_BLAS("cublasGemmEx", gemm(cu, d, &g));
        CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[0], d->stream));
        for (size_t r = 0; r < batch; r++) {
            CK_BLAS("cublasGemmEx", gemm(cu, d, &g));
            CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[r + 1], d->stream));
        }
        CK_RT("cudaEventSynchronize", cu->rt.EventSynchronize(ev[batch]));
        for (size_t r = 0; r < batch; r++)
            CK(elapsed(ctx, ev[r], ev[r + 1], &job->times[done + r]));
        done += batch;
    }
    job->runs = done;

    /* Device to host, timed apart when TRANSFERS is on. */
    if (job->transfers || job->verify) {
        CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[0], d->stream));
        CK_RT("cudaMemcpyAsync", cu->rt.MemcpyAsync(b.hC, b.dC, bc, cudaMemcpyDeviceToHost, d->stream));
        CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[1], d->stream));
        CK_RT("cudaEventSynchronize", cu->rt.EventSynchronize(ev[1]));
        if (job->transfers)
            CK(elapsed(ctx, ev[0], ev[1], &job->d2h_s));
    }

    if (job->verify)
        gp_mm_verify(job, b.hA, ein, b.hB, ein, b.hC, GP_ELEM_F32);
    st = GPUPROBE_OK;

out:
    if (st != GPUPROBE_OK && d && d->stream) {
        /* Work may still be queued on the stream: let it finish before its
         * buffers are freed. */
        (void)cu->rt.StreamSynchronize(d->stream);
        (void)cu->rt.GetLastError();
    }
    release_buffers(cu, &b);
    {
        gpuprobe_status lst = gp_cuda_leave(ctx, dev);
        if (st == GPUPROBE_OK)
            st = lst;
    }
    if (st != GPUPROBE_OK)
        job->runs = 0;
    return st;
}

#endif /* GPUPROBE_HAVE_CUDA */
