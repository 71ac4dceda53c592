/*
 * no_cuda_matmul.c - the CUDA matmul backend of a build without CUDA
 * support, in place of cuda_matmul.c: every GPU run is
 * GPUPROBE_ERR_CUDA_UNAVAILABLE, and there is nothing to release.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "matmul_backend.h"

void gp_cuda_blas_release(gpuprobe_context *ctx)
{
    (void)ctx;
}

static gpuprobe_status no_prepare(gpuprobe_context *ctx, gp_mm_job *job, gp_mm_host *host,
                                  void **state)
{
    (void)job;
    (void)host;
    (void)state;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s",
                   gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NOT_BUILT));
}

/* Never called: prepare() always fails. */
static gpuprobe_status no_run(gpuprobe_context *ctx, void *state, size_t reps, double *seconds)
{
    (void)state;
    (void)reps;
    *seconds = 0.0;
    return gp_fail(ctx, GPUPROBE_ERR_INTERNAL, "no CUDA backend in this build");
}

static gpuprobe_status no_release(gpuprobe_context *ctx, void *state, gpuprobe_status st)
{
    (void)ctx;
    (void)state;
    return st;
}

const gp_mm_backend gp_cuda_backend = {
    .needs = NULL,
    .prepare = no_prepare,
    .upload = NULL,
    .run = no_run,
    .download = NULL,
    .release = no_release,
};
