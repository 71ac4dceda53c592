/*
 * cuda_matmul.c - the CUDA backend of the timed matmul: cublasGemmEx on the
 * library's own stream, timed with CUDA events, behind the table of
 * operations of matmul_backend.h (the protocol is matmul.c's). Built only
 * with CUDA support (no_cuda_matmul.c otherwise).
 *
 * Per context, one non-blocking stream, one cuBLAS handle and two events
 * per CUDA device, created at the first matmul on that device and kept (in
 * ctx->blas) until gpuprobe_context_destroy().
 *
 * Precisions (all with fp32 accumulation, alpha/beta fp32):
 *   fp32  A, B, C CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH: no
 *         TF32 (since CUDA 11 the default math mode never uses it; the
 *         verification tolerance would catch it, see numbers.c);
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
#include "matmul_backend.h"
#include "cuda_loader.h"

#include <stdlib.h>
#include <string.h>

/* Headroom left on the device beyond A, B and C: cuBLAS's workspace
 * (up to 32 MiB per handle on Hopper) and its kernels' own needs. */
#define GP_DEVICE_HEADROOM ((size_t)64 << 20)

typedef struct gp_blas_dev {
    int cuda_index;
    cudaStream_t stream;
    cublasHandle_t handle;
    int version;             /* cublasGetVersion: major*10000+minor*100+patch */
    cudaEvent_t events[2];   /* before and after what is timed */
    size_t nevents;          /* how many of them exist */
} gp_blas_dev;

struct gp_cuda_blas {
    gp_blas_dev *dev;
    size_t ndev;
};

/* Destroy what exists of d (which is then dropped). */
static void dev_release(const gp_cuda *cu, const gp_blas_dev *d)
{
    for (size_t i = 0; i < d->nevents; i++)
        cu->rt.EventDestroy(d->events[i]);
    if (d->handle)
        cu->blas.Destroy(d->handle);
    if (d->stream)
        cu->rt.StreamDestroy(d->stream);
}

void gp_cuda_blas_release(gpuprobe_context *ctx)
{
    if (!ctx || !ctx->blas)
        return;
    struct gp_cuda_blas *b = ctx->blas;
    const gp_cuda *cu = ctx->cuda; /* there: a device's state exists only after a GPU matmul */
    for (size_t i = 0; i < b->ndev; i++) {
        /* Handles and streams belong to their device's context: make it
         * current (pushed) while they are destroyed. */
        size_t di = (size_t)b->dev[i].cuda_index + 1;
        int pushed = di < ctx->ndevices &&
                     gp_cuda_enter(ctx, &ctx->devices[di]) == GPUPROBE_OK;
        dev_release(cu, &b->dev[i]); /* best effort even if not pushed */
        if (pushed)
            (void)gp_cuda_leave(ctx, &ctx->devices[di]);
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
    return gp_cuda_rt_fail(ctx, call, e);
}

static gpuprobe_status blas_fail(gpuprobe_context *ctx, const char *call,
                                 cublasStatus_t s)
{
    return gp_cublas_fail(ctx, call, s);
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
    if (e != cudaSuccess)
        return rt_fail(ctx, "cudaStreamCreateWithFlags", e);
    cublasStatus_t s = cu->blas.Create(&d.handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        d.handle = NULL; /* not created, whatever the call wrote */
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
    for (; d.nevents < sizeof d.events / sizeof d.events[0]; d.nevents++) {
        e = cu->rt.EventCreate(&d.events[d.nevents]);
        if (e != cudaSuccess) {
            dev_release(cu, &d);
            return rt_fail(ctx, "cudaEventCreate", e);
        }
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

static void release_buffers(const gp_cuda *cu, const bufs *b)
{
    if (b->dA) cu->rt.Free(b->dA);
    if (b->dB) cu->rt.Free(b->dB);
    if (b->dC) cu->rt.Free(b->dC);
    if (b->hA) cu->rt.FreeHost(b->hA);
    if (b->hB) cu->rt.FreeHost(b->hB);
    if (b->hC) cu->rt.FreeHost(b->hC);
}

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

/* The cublasGemmEx types of each dtype (the table at the top); C is
 * CUDA_R_32F in all. */
static const struct gemm_type {
    gpuprobe_dtype dtype;
    cudaDataType ab_type;
    const char *ab_name;
    cublasComputeType_t compute;
    const char *compute_name;
    gp_elem ein;
} gemm_types_table[] = {
    {GPUPROBE_DTYPE_FP32, CUDA_R_32F, "CUDA_R_32F", CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F",
     GP_ELEM_F32},
    {GPUPROBE_DTYPE_TF32, CUDA_R_32F, "CUDA_R_32F", CUBLAS_COMPUTE_32F_FAST_TF32,
     "CUBLAS_COMPUTE_32F_FAST_TF32", GP_ELEM_F32},
    {GPUPROBE_DTYPE_FP16, CUDA_R_16F, "CUDA_R_16F", CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F",
     GP_ELEM_F16},
    {GPUPROBE_DTYPE_BF16, CUDA_R_16BF, "CUDA_R_16BF", CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F",
     GP_ELEM_BF16},
};

/* The row of a dtype, or NULL when CUDA devices do not do it. */
static const struct gemm_type *gemm_type(gpuprobe_dtype dt)
{
    for (size_t i = 0; i < sizeof gemm_types_table / sizeof gemm_types_table[0]; i++)
        if (gemm_types_table[i].dtype == dt)
            return &gemm_types_table[i];
    return NULL;
}

/* Is CUDA there, with cuBLAS? Loads cuBLAS at the first GPU matmul. */
static gpuprobe_status cuda_ready(gpuprobe_context *ctx, const gp_device *dev)
{
    /* A CUDA device in the table: gp_cuda_load() has decided already. */
    if (ctx->fake)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "%s (%s) is a simulated CUDA device (test seam); a "
                       "matmul needs a real one",
                       dev->spec, dev->name);
    return gp_cuda_load_cublas(ctx); /* once; refused where CUDA is not usable */
}

/* One run's state: from prepare() to release(). */
typedef struct cuda_run {
    const gp_device *dev;
    gp_blas_dev *d;           /* the device's stream, handle, events */
    gemm_call g;
    bufs b;
    size_t ba, bb, bc;
} cuda_run;

#define CK_RT(call, expr)                                                     \
    do {                                                                      \
        cudaError_t e_ = (expr);                                              \
        if (e_ != cudaSuccess)                                                \
            return rt_fail(ctx, call, e_);                                    \
    } while (0)

#define CK_BLAS(call, expr)                                                   \
    do {                                                                      \
        cublasStatus_t s_ = (expr);                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                      \
            return blas_fail(ctx, call, s_);                                  \
    } while (0)

/* A, B and C by one of the runtime's allocators (cudaMallocHost,
 * cudaMalloc), up to the first failure, whose error it returns with the
 * runtime's last error cleared. */
static cudaError_t alloc_abc(const gp_cuda *cu, cudaError_t (*alloc)(void **, size_t),
                             const cuda_run *r, void **a, void **b, void **c)
{
    cudaError_t e = alloc(a, r->ba);
    if (e == cudaSuccess)
        e = alloc(b, r->bb);
    if (e == cudaSuccess)
        e = alloc(c, r->bc);
    if (e != cudaSuccess)
        (void)cu->rt.GetLastError();
    return e;
}

/* Device memory for A, B and C and cuBLAS, then the buffers: pinned on the
 * host (transfers at full bus speed, and truly async), then on the device,
 * C poisoned there (0xFFFFFFFF is an fp32 NaN). Inside the device's
 * context; on failure the caller releases what is allocated. */
static gpuprobe_status allocate(gpuprobe_context *ctx, const gp_mm_job *job, cuda_run *r)
{
    const gp_cuda *cu = ctx->cuda;
    bufs *b = &r->b;
    size_t free_b = 0, total_b = 0, abc = r->ba + r->bb + r->bc;
    CK_RT("cudaMemGetInfo", cu->rt.MemGetInfo(&free_b, &total_b));
    if (abc > free_b || free_b - abc < GP_DEVICE_HEADROOM)
        return gp_fail(ctx, GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY,
                       "matmul %dx%dx%d %s needs %zu bytes (%.1f MiB) of device "
                       "memory for A, B and C plus %zu MiB for cuBLAS, but %s "
                       "has %zu bytes (%.1f MiB) free of %zu",
                       r->g.m, r->g.n, r->g.k, gpuprobe_dtype_name(job->dtype), abc,
                       (double)abc / 1048576.0, GP_DEVICE_HEADROOM >> 20, r->dev->spec,
                       free_b, (double)free_b / 1048576.0, total_b);
    cudaError_t e = alloc_abc(cu, cu->rt.MallocHost, r, &b->hA, &b->hB, &b->hC);
    if (e != cudaSuccess)
        return gp_fail(ctx, e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_OUT_OF_MEMORY
                                                           : GPUPROBE_ERR_CUDA,
                       "cudaMallocHost of pinned host buffers (%zu + %zu + %zu "
                       "bytes) failed: %s",
                       r->ba, r->bb, r->bc, rt_name(cu, e));
    e = alloc_abc(cu, cu->rt.Malloc, r, &b->dA, &b->dB, &b->dC);
    if (e != cudaSuccess)
        return gp_fail(ctx, e == cudaErrorMemoryAllocation ? GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY
                                                           : GPUPROBE_ERR_CUDA,
                       "cudaMalloc of A, B and C (%zu + %zu + %zu bytes) on %s "
                       "failed: %s",
                       r->ba, r->bb, r->bc, r->dev->spec, rt_name(cu, e));
    r->g.dA = b->dA;
    r->g.dB = b->dB;
    r->g.dC = b->dC;
    CK_RT("cudaMemsetAsync", cu->rt.MemsetAsync(b->dC, 0xFF, r->bc, r->d->stream));
    CK_RT("cudaStreamSynchronize", cu->rt.StreamSynchronize(r->d->stream));
    return GPUPROBE_OK;
}

/* The device's stream, handle and events, the math mode, the buffers. */
static gpuprobe_status set_up(gpuprobe_context *ctx, gp_mm_job *job, cuda_run *r)
{
    const gp_cuda *cu = ctx->cuda;
    gpuprobe_status st = get_dev(ctx, r->dev->cuda_index, &r->d);
    if (st != GPUPROBE_OK)
        return st;
    CK_BLAS("cublasSetMathMode", cu->blas.SetMathMode(r->d->handle, CUBLAS_DEFAULT_MATH));
    describe(job, r->d, &r->g);
    job->threads = 0;
    return allocate(ctx, job, r);
}

static gpuprobe_status cuda_release(gpuprobe_context *ctx, void *state, gpuprobe_status st);

static gpuprobe_status cuda_prepare(gpuprobe_context *ctx, gp_mm_job *job, gp_mm_host *host,
                                    void **state)
{
    const gp_device *dev = job->dev;
    const struct gemm_type *t = gemm_type(job->dtype);
    if (!t)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED, "matmul in %s is not done on CUDA devices",
                       gpuprobe_dtype_name(job->dtype));
    gpuprobe_status st = cuda_ready(ctx, dev);
    if (st != GPUPROBE_OK)
        return st;
    cuda_run *r = calloc(1, sizeof *r);
    if (!r)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the matmul state");
    r->dev = dev;
    r->g = (gemm_call){t->ab_type, CUDA_R_32F, t->compute, t->ab_name, "CUDA_R_32F",
                       t->compute_name, (int)job->m, (int)job->n, (int)job->k, NULL, NULL, NULL};
    gp_elem ein = t->ein;
    r->ba = job->a_bytes;
    r->bb = job->b_bytes;
    r->bc = job->c_bytes; /* fp32 */
    /* The device's primary context, pushed until release(): the thread's
     * current context and device are left as they were, and no other
     * device gets a context. */
    st = gp_cuda_enter(ctx, dev);
    if (st != GPUPROBE_OK) {
        free(r);
        return st;
    }
    st = set_up(ctx, job, r);
    if (st != GPUPROBE_OK)
        return cuda_release(ctx, r, st);
    *host = (gp_mm_host){r->b.hA, r->b.hB, r->b.hC, ein, ein, GP_ELEM_F32};
    *state = r;
    return GPUPROBE_OK;
}

/* One copy of a transfer. */
typedef struct xfer {
    void *dst;
    const void *src;
    size_t bytes;
} xfer;

/* The copies between the events, on the backend's stream; their time. */
static gpuprobe_status copy(gpuprobe_context *ctx, const cuda_run *r, const xfer *x,
                            size_t n, enum cudaMemcpyKind kind, double *seconds)
{
    const gp_cuda *cu = ctx->cuda;
    const cudaEvent_t *ev = r->d->events;
    cudaStream_t s = r->d->stream;
    CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[0], s));
    for (size_t i = 0; i < n; i++)
        CK_RT("cudaMemcpyAsync", cu->rt.MemcpyAsync(x[i].dst, x[i].src, x[i].bytes, kind, s));
    CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[1], s));
    CK_RT("cudaEventSynchronize", cu->rt.EventSynchronize(ev[1]));
    return elapsed(ctx, ev[0], ev[1], seconds);
}

static gpuprobe_status cuda_upload(gpuprobe_context *ctx, void *state, double *seconds)
{
    const cuda_run *r = state;
    const xfer ab[] = {{r->b.dA, r->b.hA, r->ba}, {r->b.dB, r->b.hB, r->bb}};
    return copy(ctx, r, ab, sizeof ab / sizeof ab[0], cudaMemcpyHostToDevice, seconds);
}

static gpuprobe_status cuda_download(gpuprobe_context *ctx, void *state, double *seconds)
{
    const cuda_run *r = state;
    const xfer c = {r->b.hC, r->b.dC, r->bc};
    return copy(ctx, r, &c, 1, cudaMemcpyDeviceToHost, seconds);
}

/* reps gemms enqueued back to back between two events, so no host launch
 * gap falls between them; the block's time by the events. */
static gpuprobe_status cuda_run_block(gpuprobe_context *ctx, void *state, size_t reps,
                                      double *seconds)
{
    const gp_cuda *cu = ctx->cuda;
    const cuda_run *r = state;
    cudaEvent_t *ev = r->d->events;
    CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[0], r->d->stream));
    for (size_t i = 0; i < reps; i++)
        CK_BLAS("cublasGemmEx", gemm(cu, r->d, &r->g));
    CK_RT("cudaEventRecord", cu->rt.EventRecord(ev[1], r->d->stream));
    CK_RT("cudaEventSynchronize", cu->rt.EventSynchronize(ev[1]));
    return elapsed(ctx, ev[0], ev[1], seconds);
}

static gpuprobe_status cuda_release(gpuprobe_context *ctx, void *state, gpuprobe_status st)
{
    cuda_run *r = state;
    const gp_cuda *cu = ctx->cuda;
    if (st != GPUPROBE_OK && r->d && r->d->stream) {
        /* Work may still be queued on the stream: let it finish before its
         * buffers are freed. */
        (void)cu->rt.StreamSynchronize(r->d->stream);
        (void)cu->rt.GetLastError();
    }
    release_buffers(cu, &r->b);
    gpuprobe_status lst = gp_cuda_leave(ctx, r->dev);
    free(r);
    return st != GPUPROBE_OK ? st : lst;
}

const gp_mm_backend gp_cuda_backend = {
    .needs = NULL,
    .prepare = cuda_prepare,
    .upload = cuda_upload,
    .run = cuda_run_block,
    .download = cuda_download,
    .release = cuda_release,
};
