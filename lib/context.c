/*
 * context.c - context lifetime, version, status strings, error messages.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "cuda_loader.h"
#include "cpu_blas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

unsigned gpuprobe_version(void) { return GPUPROBE_VERSION_NUMBER; }

const char *gpuprobe_version_string(void) { return GPUPROBE_VERSION_STRING; }

/* Indexed by status value; the enum is dense from 0. */
static const struct {
    const char *name;
    const char *text;
} status_table[] = {
    {"ok", "success"},
    {"invalid_argument", "invalid argument"},
    {"out_of_memory", "out of host memory"},
    {"device_out_of_memory", "out of device memory"},
    {"not_found", "no such device"},
    {"unsupported", "not supported by this device or build"},
    {"cuda_unavailable", "CUDA is not usable"},
    {"cuda", "a CUDA call failed"},
    {"no_fit", "no device meets the requirements"},
    {"verify_failed", "result failed verification"},
    {"overflow", "size too large"},
    {"system", "operating-system query failed"},
    {"internal", "internal error in libgpuprobe"},
};

#define N_STATUS (sizeof status_table / sizeof status_table[0])

const char *gpuprobe_status_string(gpuprobe_status status)
{
    unsigned v = (unsigned)status;
    return v < N_STATUS ? status_table[v].text : "unknown status";
}

const char *gpuprobe_status_name(gpuprobe_status status)
{
    unsigned v = (unsigned)status;
    return v < N_STATUS ? status_table[v].name : "unknown";
}

void gp_strlcpy(char *dst, const char *src, size_t size)
{
    if (size == 0)
        return;
    size_t n = src ? strnlen(src, size - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

void gp_snprintf(char *dst, size_t size, const char *fmt, ...)
{
    if (size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(dst, size, fmt, ap);
    va_end(ap);
    if (r < 0)
        dst[0] = '\0';
}

void gp_quote(char *dst, size_t size, const char *text, size_t max)
{
    if (size == 0)
        return;
    if (!text) {
        gp_strlcpy(dst, "(null)", size);
        return;
    }
    const char *ellipsis = "...";
    size_t room = size - 1; /* for NUL */
    size_t i = 0, o = 0;
    int truncated = 0;
    for (; text[i] != '\0'; i++) {
        if (i >= max || o + 1 > room) {
            truncated = 1;
            break;
        }
        unsigned char c = (unsigned char)text[i];
        dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (truncated) {
        size_t el = strlen(ellipsis);
        if (o + el > room)
            o = room >= el ? room - el : 0;
        memcpy(dst + o, ellipsis, room >= el ? el : room);
        o += room >= el ? el : room;
    }
    dst[o] = '\0';
}

void gp_quote_inplace(char *text)
{
    gp_quote(text, strlen(text) + 1, text, SIZE_MAX);
}

const char *gp_getenv(const char *name)
{
#if defined(__GLIBC__) || defined(_GNU_SOURCE)
    return secure_getenv(name);
#else
    return getenv(name);
#endif
}

gpuprobe_status gp_fail(gpuprobe_context *ctx, gpuprobe_status status,
                        const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        int r = vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
        if (r < 0 || ctx->error[0] == '\0')
            gp_strlcpy(ctx->error, gpuprobe_status_string(status),
                       sizeof ctx->error);
        gp_quote_inplace(ctx->error);
    }
    return status;
}

gpuprobe_status gp_ok(gpuprobe_context *ctx)
{
    if (ctx)
        ctx->error[0] = '\0';
    return GPUPROBE_OK;
}

static int env_means_off(const char *v)
{
    static const char *const off[] = {"0", "off", "no", "false", "disable",
                                      "disabled"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcasecmp(v, off[i]) == 0)
            return 1;
    return 0;
}

static void read_environment(gpuprobe_context *ctx)
{
    const char *v = gp_getenv("GPUPROBE_CUDA");
    ctx->env_cuda_off = v && env_means_off(v);
    v = gp_getenv("GPUPROBE_NVML");
    ctx->env_nvml_off = v && env_means_off(v);

    v = gp_getenv("GPUPROBE_CUDA_LIBDIR");
    if (v && v[0] != '\0') {
        ctx->env_libdir_set = 1;
        /* Over-long values are emptied; the loader then reports them as
         * too long (cause GPUPROBE_CUDA_OTHER). */
        gp_strlcpy(ctx->env_libdir, v, sizeof ctx->env_libdir);
        if (strlen(v) >= sizeof ctx->env_libdir)
            ctx->env_libdir[0] = '\0';
    }

    v = gp_getenv("GPUPROBE_DEVICE");
    if (v) {
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

/* Defined in cuda_matmul.c: releases cuBLAS handles and streams. */
void gp_cuda_blas_release(gpuprobe_context *ctx);

void gpuprobe_context_destroy(gpuprobe_context *ctx)
{
    if (!ctx)
        return;
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

void gp_test_set_cuda(gpuprobe_context *ctx, const gp_fake_cuda *fake)
{
    ctx->fake = fake;
    ctx->enumerated = 0;
    free(ctx->devices);
    ctx->devices = NULL;
    ctx->ndevices = 0;
}

void gp_test_set_cuda_held(gpuprobe_context *ctx, uint64_t held_mask)
{
    ctx->fake_context_held = held_mask;
}

void gp_test_set_sysroot(gpuprobe_context *ctx, const char *sysroot)
{
    ctx->sysroot = sysroot;
    ctx->enumerated = 0;
    free(ctx->devices);
    ctx->devices = NULL;
    ctx->ndevices = 0;
}
