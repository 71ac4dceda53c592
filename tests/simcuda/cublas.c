/*
 * cublas.c - the simulated cuBLAS, built twice: libcublas.so.13 and
 * libcublas.so.12 (SIM_BLAS_VERSION, major * 10000 + minor * 100 + patch;
 * the cublas_version key changes what cublasGetVersion reports).
 *
 * Semantics simulated, from the cuBLAS documentation:
 * - cublasCreate initialises the CUDA runtime on the current device (the
 *   current context, else the primary context of the runtime's device,
 *   which the runtime then keeps) and takes the default workspace from that
 *   device's memory: 32 MiB on compute capability 9.0 and later, 4 MiB
 *   before. Failure to initialise is CUBLAS_STATUS_NOT_INITIALIZED, no
 *   memory for the workspace CUBLAS_STATUS_ALLOC_FAILED.
 * - cublasGemmEx: column-major C = alpha op(A) op(B) + beta C (gemm.c);
 *   CUBLAS_STATUS_INVALID_VALUE for m, n or k < 0, a transpose other than
 *   N/T/C, lda < max(1, m) (transa N) or max(1, k), ldb < max(1, k) (transb
 *   N) or max(1, n), ldc < max(1, m), a NULL alpha or beta;
 *   CUBLAS_STATUS_NOT_SUPPORTED for A and B of different types or a
 *   (A/B, C, compute) combination outside the documented table (int8 is
 *   not simulated); CUBLAS_STATUS_ARCH_MISMATCH below compute capability
 *   5.0. The work is queued on the handle's stream; bad device pointers
 *   fault asynchronously, as on a GPU. FAST_TF32 (or TF32 tensor-op math
 *   with COMPUTE_32F) rounds the inputs to TF32 on compute capability 8.0
 *   and later, unless NVIDIA_TF32_OVERRIDE=0 or pedantic math says not to.
 * - cublasSdot: the sum of x[i] y[i] over n floats (any non-zero
 *   increments, a negative one walking the vector from its end; n <= 0
 *   gives 0) into result, which the pointer mode says is a host float (the
 *   call then waits for the stream and returns with it written) or a
 *   device float (queued, like every other call). CUBLAS_STATUS_INVALID_VALUE
 *   for a NULL result; operands outside their allocation fault
 *   asynchronously. Time: the launch (gemm_launch_ns), then both vectors at
 *   the board's memory rate (memory_gbps).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#ifndef SIM_BLAS_VERSION
#error "SIM_BLAS_VERSION (e.g. 130100) must be defined"
#endif

#define ENTER(name)                                                           \
    sim_call call_;                                                           \
    int inj_ = 0;                                                             \
    if (sim_begin(&call_, SIM_BLAS, name, &inj_) == 1)                        \
    return (cublasStatus_t)sim_end(&call_, inj_)
#define LEAVE(s) return (cublasStatus_t)sim_end(&call_, inj_ ? inj_ : (int)(s))

/* A live handle (not destroyed; its context still exists). */
static sim_blas *live(cublasHandle_t h)
{
    for (sim_blas *b = sim.handles; b; b = b->next)
        if ((void *)b == (void *)h)
            return b->ctx ? b : NULL;
    return NULL;
}

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t *handle)
{
    ENTER("cublasCreate_v2");
    if (!handle)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    sim_ctx *c = NULL;
    if (sim_driver_init() != CUDA_SUCCESS ||
        sim.cfg.driver_version / 1000 < SIM_BLAS_VERSION / 10000 || /* runtime too new */
        sim_rt_context(&c) != cudaSuccess)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    sim_blas *b = calloc(1, sizeof *b);
    if (!b)
        LEAVE(CUBLAS_STATUS_ALLOC_FAILED);
    size_t ws = (size_t)(c->unit->cc_major >= 9 ? 32 : 4) << 20;
    if (sim_dev_alloc(c, ws, SIM_TAG_WORKSPACE, &b->workspace) != cudaSuccess) {
        free(b);
        LEAVE(CUBLAS_STATUS_ALLOC_FAILED);
    }
    b->ctx = c;
    b->math = CUBLAS_DEFAULT_MATH;
    b->pointer_mode = CUBLAS_POINTER_MODE_HOST;
    b->version = SIM_BLAS_VERSION;
    b->next = sim.handles;
    sim.handles = b;
    *handle = (cublasHandle_t)(void *)b;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle)
{
    ENTER("cublasDestroy_v2");
    for (sim_blas **pp = &sim.handles; *pp; pp = &(*pp)->next) {
        sim_blas *b = *pp;
        if ((void *)b != (void *)handle)
            continue;
        *pp = b->next;
        /* A faulted context cannot free; its memory goes with it. */
        if (b->ctx && b->workspace && !b->ctx->fault)
            sim_dev_free(b->workspace);
        free(b);
        LEAVE(CUBLAS_STATUS_SUCCESS);
    }
    LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
}

cublasStatus_t CUBLASWINAPI cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    ENTER("cublasGetVersion_v2");
    (void)handle;
    if (!version)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    *version = sim.cfg.blas_version ? sim.cfg.blas_version : SIM_BLAS_VERSION;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    ENTER("cublasSetStream_v2");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    sim_stream *s = NULL;
    if ((uintptr_t)streamId > 2 && !(s = sim_stream_lookup(streamId, NULL)))
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    b->stream = s;
    b->stream_set = s != NULL;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
    ENTER("cublasGetStream_v2");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    if (!streamId)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    *streamId = (cudaStream_t)(void *)b->stream;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    ENTER("cublasSetMathMode");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    unsigned m = (unsigned)mode;
    if ((m & 0xfu) > CUBLAS_TF32_TENSOR_OP_MATH ||
        (m & ~0xfu & ~(unsigned)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    b->math = mode;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    ENTER("cublasGetMathMode");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    if (!mode)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    *mode = b->math;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

const char *CUBLASWINAPI cublasGetStatusName(cublasStatus_t status)
{
    sim_call c;
    sim_begin(&c, SIM_BLAS, "cublasGetStatusName", NULL);
    const char *s = sim_blas_name(status);
    if (s && sim.cfg.error_name[0])
        s = sim.cfg.error_name;
    sim_end(&c, 0);
    return s ? s : "CUBLAS_STATUS_UNKNOWN";
}

const char *CUBLASWINAPI cublasGetStatusString(cublasStatus_t status)
{
    sim_call c;
    sim_begin(&c, SIM_BLAS, "cublasGetStatusString", NULL);
    const char *s = !sim_blas_name(status)   ? "unknown error"
                    : sim.cfg.error_text[0] ? sim.cfg.error_text
                                            : sim_blas_string(status);
    sim_end(&c, 0);
    return s;
}

static double scalar(const void *p, cublasComputeType_t ct)
{
    switch (ct) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: {
        double d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC: {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        return sim_half_to_float(h);
    }
    default: {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    }
}

static int valid_op(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int valid_algo(cublasGemmAlgo_t a)
{
    int v = (int)a;
    return v == CUBLAS_GEMM_DEFAULT || (v >= CUBLAS_GEMM_ALGO0 && v <= CUBLAS_GEMM_ALGO23) ||
           (v >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && v <= CUBLAS_GEMM_ALGO15_TENSOR_OP);
}

static int max1(int v) { return v > 1 ? v : 1; }

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void *alpha, const void *A, cudaDataType Atype,
                                         int lda, const void *B, cudaDataType Btype, int ldb,
                                         const void *beta, void *C, cudaDataType Ctype, int ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    ENTER("cublasGemmEx");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    sim_unit *u = b->ctx->unit;
    if (u->cc_major < 5)
        LEAVE(CUBLAS_STATUS_ARCH_MISMATCH);
    if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || k < 0 ||
        lda < max1(transa == CUBLAS_OP_N ? m : k) || ldb < max1(transb == CUBLAS_OP_N ? k : n) ||
        ldc < max1(m) || !alpha || !beta)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    if (Atype != Btype || !sim_gemm_supported(Atype, Ctype, computeType) || !valid_algo(algo))
        LEAVE(CUBLAS_STATUS_NOT_SUPPORTED);
    sim_stream *s = b->stream_set ? b->stream : &b->ctx->null_stream;
    if (b->stream_set && (!sim_stream_lookup(s, NULL) || s->ctx != b->ctx))
        LEAVE(CUBLAS_STATUS_EXECUTION_FAILED); /* destroyed, or another device's */
    if (b->ctx->fault)
        LEAVE(CUBLAS_STATUS_EXECUTION_FAILED);
    if (m == 0 || n == 0)
        LEAVE(CUBLAS_STATUS_SUCCESS);

    sim_op op;
    memset(&op, 0, sizeof op);
    op.kind = OP_GEMM;
    sim_gemm *g = &op.u.gemm;
    g->ta = transa;
    g->tb = transb;
    g->m = m;
    g->n = n;
    g->k = k;
    g->alpha = scalar(alpha, computeType);
    g->beta = scalar(beta, computeType);
    g->a = (uintptr_t)A;
    g->b = (uintptr_t)B;
    g->c = (uintptr_t)C;
    g->at = Atype;
    g->bt = Btype;
    g->ct = Ctype;
    g->lda = lda;
    g->ldb = ldb;
    g->ldc = ldc;
    g->compute = computeType;
    const char *override = getenv("NVIDIA_TF32_OVERRIDE");
    int tensor = u->cc_major >= 8 && !(override && strcmp(override, "0") == 0) &&
                 (b->math & 0xfu) != CUBLAS_PEDANTIC_MATH;
    g->tf32 = tensor && (computeType == CUBLAS_COMPUTE_32F_FAST_TF32 ||
                         (computeType == CUBLAS_COMPUTE_32F &&
                          (b->math & 0xfu) == CUBLAS_TF32_TENSOR_OP_MATH));
    g->round16 = computeType == CUBLAS_COMPUTE_32F_FAST_16F    ? 1
                 : computeType == CUBLAS_COMPUTE_32F_FAST_16BF ? 2
                                                               : 0;
    /* Modelled time: a fixed cost (gemm_launch_ns), then fp32 at the
     * board's rate, tensor-core paths faster. */
    double rate = u->tflops * 1e12;
    if (u->cc_major >= 8 && (g->tf32 || g->round16))
        rate *= 8.0;
    if (u->cc_major >= 7 && (Atype == CUDA_R_16F || Atype == CUDA_R_16BF))
        rate *= 16.0;
    op.cost_s = (double)sim.cfg.gemm_launch_ns / 1e9 +
                2.0 * (double)m * (double)n * (double)k / rate;
    /* A device warming up: the c-th gemm (from 0) of R ramp calls costs
     * 1 + gemm_ramp x (R - c) / R times as much. */
    unsigned long ramp = (unsigned long)sim.cfg.gemm_ramp_calls, c = u->gemm_calls++;
    if (c < ramp)
        op.cost_s *= 1.0 + sim.cfg.gemm_ramp * (double)(ramp - c) / (double)ramp;
    op.fault = sim_async_fault("cublasGemmEx");
    LEAVE(sim_enqueue(s, &op) == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED);
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    ENTER("cublasSetPointerMode_v2");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    b->pointer_mode = mode;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t CUBLASWINAPI cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    ENTER("cublasGetPointerMode_v2");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    if (!mode)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    *mode = b->pointer_mode;
    LEAVE(CUBLAS_STATUS_SUCCESS);
}

/* The stream a handle's work goes to; NULL when it is no longer usable. */
static sim_stream *handle_stream(sim_blas *b)
{
    sim_stream *s = b->stream_set ? b->stream : &b->ctx->null_stream;
    if (b->stream_set && (!sim_stream_lookup(s, NULL) || s->ctx != b->ctx))
        return NULL; /* destroyed, or another device's */
    return s;
}

cublasStatus_t CUBLASWINAPI cublasSdot_v2(cublasHandle_t handle, int n, const float *x, int incx,
                                          const float *y, int incy, float *result)
{
    ENTER("cublasSdot_v2");
    sim_blas *b = live(handle);
    if (!b)
        LEAVE(CUBLAS_STATUS_NOT_INITIALIZED);
    if (!result)
        LEAVE(CUBLAS_STATUS_INVALID_VALUE);
    sim_stream *s = handle_stream(b);
    if (!s || b->ctx->fault)
        LEAVE(CUBLAS_STATUS_EXECUTION_FAILED);
    sim_op op;
    memset(&op, 0, sizeof op);
    op.kind = OP_DOT;
    op.u.dot = (sim_dot){(uintptr_t)x, (uintptr_t)y, (uintptr_t)result, n, incx, incy,
                         b->pointer_mode == CUBLAS_POINTER_MODE_HOST};
    /* Modelled time: the launch, then both vectors read at the memory's
     * rate. */
    double bytes = n > 0 ? 2.0 * (double)n * sizeof(float) : 0.0;
    op.cost_s = (double)sim.cfg.gemm_launch_ns / 1e9 + bytes / (b->ctx->unit->memory_gbps * 1e9);
    op.fault = sim_async_fault("cublasSdot_v2");
    if (sim_enqueue(s, &op) != cudaSuccess)
        LEAVE(CUBLAS_STATUS_EXECUTION_FAILED);
    if (op.u.dot.to_host) {
        /* Host pointer mode: the call returns with the result written. */
        sim_run_stream(s, NULL);
        if (b->ctx->fault)
            LEAVE(CUBLAS_STATUS_EXECUTION_FAILED);
    }
    LEAVE(CUBLAS_STATUS_SUCCESS);
}
