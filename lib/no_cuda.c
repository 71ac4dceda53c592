/*
 * no_cuda.c - the CUDA side of a build without CUDA support, in place of
 * cuda_loader.c and cuda_device.c (loader floor): CUDA is "not built" (or
 * "disabled" when GPUPROBE_CUDA turns it off), there is no CUDA device,
 * and everything that would need one fails with
 * GPUPROBE_ERR_CUDA_UNAVAILABLE. See internal.h.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"

#include <stdlib.h>

static const char not_built[] = "libgpuprobe was built without CUDA support";

gpuprobe_status gp_cuda_load(gpuprobe_context *ctx)
{
    if (ctx->fake)
        return GPUPROBE_OK; /* simulated devices (test seam): the cause is theirs */
    ctx->driver_version = 0;
    ctx->runtime_version = 0;
    if (ctx->env_cuda_off) {
        ctx->cuda_cause = GPUPROBE_CUDA_DISABLED;
        gp_strlcpy(ctx->cuda_detail,
                   "GPUPROBE_CUDA asks for it",
                   sizeof ctx->cuda_detail);
        return GPUPROBE_OK;
    }
    ctx->cuda_cause = GPUPROBE_CUDA_NOT_BUILT;
    gp_strlcpy(ctx->cuda_detail,
               "the CUDA headers were not used at build time "
               "(GPUPROBE_WITH_CUDA=OFF, or not found: set CUDA_HOME)",
               sizeof ctx->cuda_detail);
    return GPUPROBE_OK;
}

gpuprobe_status gp_cuda_load_cublas(gpuprobe_context *ctx)
{
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "cannot load cuBLAS: %s", not_built);
}

void gp_cuda_unload(struct gp_cuda *cuda)
{
    free(cuda); /* never allocated here: NULL */
}

struct gp_nvml *gp_cuda_nvml(gpuprobe_context *ctx, const char **why)
{
    (void)ctx;
    if (why)
        *why = not_built;
    return NULL;
}

int gp_cuda_device_count(gpuprobe_context *ctx)
{
    (void)ctx;
    return 0;
}

gpuprobe_status gp_cuda_describe(gpuprobe_context *ctx, gp_device *d, int i)
{
    (void)d;
    (void)i;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s", not_built);
}

int gp_cuda_context_held(gpuprobe_context *ctx, const gp_device *dev)
{
    (void)ctx;
    (void)dev;
    return -1;
}

gpuprobe_status gp_cuda_context_memory(gpuprobe_context *ctx, const gp_device *dev,
                                       gp_memory *out)
{
    (void)dev;
    (void)out;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s", not_built);
}

gpuprobe_status gp_cuda_enter(gpuprobe_context *ctx, const gp_device *dev)
{
    (void)dev;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s", not_built);
}

gpuprobe_status gp_cuda_leave(gpuprobe_context *ctx, const gp_device *dev)
{
    (void)dev;
    return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s", not_built);
}
