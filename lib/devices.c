/* devices.c - TEMPORARY CPU-only enumeration so the tree links; replaced by
 * the real implementation. SPDX-License-Identifier: BSD-2-Clause */
#include "internal.h"
#include <stdlib.h>
#include <unistd.h>

gpuprobe_status gp_enumerate(gpuprobe_context *ctx)
{
    if (ctx->enumerated)
        return GPUPROBE_OK;
    ctx->devices = calloc(1, sizeof *ctx->devices);
    if (!ctx->devices)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory");
    ctx->ndevices = 1;
    ctx->devices[0].kind = GPUPROBE_DEVICE_CPU;
    gp_strlcpy(ctx->devices[0].name, "CPU", sizeof ctx->devices[0].name);
    gp_strlcpy(ctx->devices[0].spec, "cpu", sizeof ctx->devices[0].spec);
    ctx->devices[0].logical_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ctx->cuda_cause = GPUPROBE_CUDA_NOT_BUILT;
    ctx->enumerated = 1;
    return GPUPROBE_OK;
}

gpuprobe_status gp_get_device(gpuprobe_context *ctx, size_t index,
                              const gp_device **dev)
{
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    if (index >= ctx->ndevices)
        return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND, "device %zu out of range", index);
    *dev = &ctx->devices[index];
    return GPUPROBE_OK;
}
