/*
 * context.c - set-up and teardown: the context (the environment read once
 * at creation), its destruction (each owner's release function, called
 * downward), the version, the last error, and the test seams that replace
 * a context's devices or filesystem root. The top floor: nothing in the
 * library calls into it. See docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

unsigned gpuprobe_version(void) { return GPUPROBE_VERSION_NUMBER; }

const char *gpuprobe_version_string(void) { return GPUPROBE_VERSION_STRING; }

/* A switch variable's value: 0 off, 1 on, -1 neither. */
static int env_switch(const char *v)
{
    static const char *const words[][6] = {
        {"0", "off", "no", "false", "disable", "disabled"},
        {"1", "on", "yes", "true", "enable", "enabled"},
    };
    for (int on = 0; on <= 1; on++)
        for (size_t i = 0; i < sizeof words[on] / sizeof words[on][0]; i++)
            if (strcasecmp(v, words[on][i]) == 0)
                return on;
    return -1;
}

/* GPUPROBE_CUDA, GPUPROBE_NVML or GPUPROBE_CPU_AMX: *off set when the value turns it off; a
 * value that is neither word is kept as the environment's error (the
 * first one only). Empty is the same as unset. */
static void read_switch(gpuprobe_context *ctx, const char *name, int *off)
{
    const char *v = gp_getenv(name);
    int sw = v && v[0] ? env_switch(v) : 1;
    *off = sw == 0;
    if (sw < 0 && !ctx->env_error[0]) {
        char q[48];
        gp_quote(q, sizeof q, v, 32);
        gp_snprintf(ctx->env_error, sizeof ctx->env_error,
                    "%s=\"%s\" is neither on (1, on, yes, true, enable, enabled) nor off "
                    "(0, off, no, false, disable, disabled); unset or empty means on",
                    name, q);
    }
}

static void read_environment(gpuprobe_context *ctx)
{
    read_switch(ctx, "GPUPROBE_CUDA", &ctx->env_cuda_off);
    read_switch(ctx, "GPUPROBE_NVML", &ctx->env_nvml_off);
    read_switch(ctx, "GPUPROBE_CPU_AMX", &ctx->env_amx_off);

    const char *v = gp_getenv("GPUPROBE_CUDA_LIBDIR");
    if (v && v[0] != '\0') {
        ctx->env_libdir_set = 1;
        /* Over-long values are emptied; the loader then reports them as
         * too long (cause GPUPROBE_CUDA_OTHER). */
        gp_strlcpy(ctx->env_libdir, v, sizeof ctx->env_libdir);
        if (strlen(v) >= sizeof ctx->env_libdir)
            ctx->env_libdir[0] = '\0';
    }

    v = gp_getenv("GPUPROBE_DEVICE");
    if (v && v[0] != '\0') {
        ctx->env_device_set = 1;
        gp_strlcpy(ctx->env_device, v, sizeof ctx->env_device);
        ctx->env_device_too_long = strlen(v) >= sizeof ctx->env_device;
    }
}

gpuprobe_status gpuprobe_context_create(gpuprobe_context **out, unsigned flags)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (flags != 0)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    gpuprobe_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    read_environment(ctx);
    *out = ctx;
    return GPUPROBE_OK;
}

void gpuprobe_context_destroy(gpuprobe_context *ctx)
{
    if (!ctx)
        return;
    gp_speed_release(ctx->speed);
    gp_cuda_blas_release(ctx);
    gp_cuda_unload(ctx->cuda);
    gp_openblas_release(ctx->openblas);
    free(ctx->devices);
    free(ctx);
}

const char *gpuprobe_last_error(const gpuprobe_context *ctx)
{
    if (!ctx)
        return "no context (NULL was passed)";
    return ctx->error;
}

/* A seam changed what enumeration finds: enumerate again at the next call. */
static void forget_devices(gpuprobe_context *ctx)
{
    ctx->enumerated = 0;
    free(ctx->devices);
    ctx->devices = NULL;
    ctx->ndevices = 0;
}

void gp_test_set_cuda(gpuprobe_context *ctx, const gp_fake_cuda *fake)
{
    ctx->fake = fake;
    forget_devices(ctx);
}

void gp_test_set_cuda_held(gpuprobe_context *ctx, uint64_t held_mask)
{
    ctx->fake_context_held = held_mask;
}

void gp_test_set_sysroot(gpuprobe_context *ctx, const char *sysroot)
{
    ctx->sysroot = sysroot;
    forget_devices(ctx);
}
