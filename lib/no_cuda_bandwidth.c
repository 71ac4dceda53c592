/*
 * no_cuda_bandwidth.c - the CUDA bandwidth backend of a build without CUDA
 * support, in place of cuda_bandwidth.c: every GPU run is
 * GPUPROBE_ERR_CUDA_UNAVAILABLE, and there is nothing to release.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "bandwidth_internal.h"

static gpuprobe_status no_open(gpuprobe_context *ctx, gp_bw_job *job, void **state)
{
    (void)job;
    (void)state;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s",
                   gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NOT_BUILT));
}

/* Never called: open() always fails. */
static gpuprobe_status no_prepare(gpuprobe_context *ctx, void *state, gp_bw_job *job)
{
    (void)state;
    (void)job;
    return gp_fail(ctx, GPUPROBE_ERR_INTERNAL, "no CUDA backend in this build");
}

static gpuprobe_status no_pass(gpuprobe_context *ctx, void *state, gpuprobe_bandwidth_test t,
                               size_t reps, double *seconds)
{
    (void)state;
    (void)t;
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

const gp_bw_backend gp_cuda_bw_backend = {
    .tests = GP_BW_CUDA_TESTS,
    .read_buffers = 2,
    .open = no_open,
    .prepare = no_prepare,
    .pass = no_pass,
    .finish = no_prepare,
    .release = no_release,
};
