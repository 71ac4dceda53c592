/*
 * memory.c - memory queries: the host's (read in host.c: RAM, cgroup v1/v2
 * limits) and CUDA device memory, through NVML without a CUDA context, or
 * through the device's context when NVML cannot answer (and then with the
 * context's cost when NVML can measure it); and what of it one allocation
 * can get (the driver's 2 MiB pages, and its allowance).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "nvml.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- CUDA device memory ------------------------------------------------------- */

int gp_context_held(gpuprobe_context *ctx, const gp_device *dev)
{
    if (ctx->fake) {
        int i = dev->cuda_index;
        return i >= 0 && i < 64 && (ctx->fake_context_held >> i & 1);
    }
    return gp_cuda_context_held(ctx, dev);
}

/* Through NVML, without a context: 0 with out's figures, else -1 and why. */
static int nvml_memory(gpuprobe_context *ctx, const gp_device *dev, gp_memory *out,
                       char *why, size_t why_size)
{
    const char *w = NULL;
    gp_nvml *n = gp_cuda_nvml(ctx, &w);
    if (!n) {
        gp_snprintf(why, why_size, "NVML is not usable: %s", w);
        return -1;
    }
    if (!dev->nvml) {
        gp_snprintf(why, why_size, "NVML does not know %s: %s", dev->spec, dev->nvml_why);
        return -1;
    }
    gp_nvml_mem m;
    const char *call = NULL;
    int rc = gp_nvml_memory(n, dev->nvml, &m, &call);
    if (rc != GP_NVML_SUCCESS) {
        char e[256];
        gp_nvml_error(n, call, rc, e, sizeof e);
        gp_snprintf(why, why_size, "NVML's memory query for %s: %s", dev->spec, e);
        return -1;
    }
    out->total = m.total;
    out->available = m.free;
    out->used = m.used;
    out->reserved = m.reserved;
    out->source = GPUPROBE_MEMORY_SOURCE_NVML;
    return 0;
}

/* A CUDA device's memory: NVML first, else (unless flags forbid it) the
 * context fallback. */
static gpuprobe_status cuda_memory(gpuprobe_context *ctx, const gp_device *dev,
                                   unsigned flags, gp_memory *out)
{
    if (ctx->fake) {
        int i = dev->cuda_index;
        if (i < 0 || (size_t)i >= ctx->fake->count)
            return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                           "simulated CUDA device %d does not exist", i);
        const gp_fake_cuda_device *f = &ctx->fake->devices[i];
        out->total = f->total_bytes;
        out->available = f->free_bytes; /* clamped by the caller, as the driver's */
        out->used = f->free_bytes < f->total_bytes ? f->total_bytes - f->free_bytes : 0;
        out->source = GPUPROBE_MEMORY_SOURCE_NVML;
        out->context_held = gp_context_held(ctx, dev) == 1;
        return GPUPROBE_OK;
    }
    if (!ctx->cuda || ctx->cuda_cause != GPUPROBE_CUDA_AVAILABLE)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "%s (%s)",
                       gpuprobe_cuda_cause_string(ctx->cuda_cause), ctx->cuda_detail);
    char why[GP_ERR_LEN];
    if (nvml_memory(ctx, dev, out, why, sizeof why) == 0) {
        out->context_held = gp_context_held(ctx, dev) == 1;
        return GPUPROBE_OK;
    }
    if (flags & GPUPROBE_DEVICE_MEMORY_NO_CONTEXT) {
        char name[80];
        gp_quote(name, sizeof name, dev->name, 64);
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "the free memory of %s (%s) cannot be read without a CUDA "
                       "context (GPUPROBE_DEVICE_MEMORY_NO_CONTEXT): %s",
                       dev->spec, name, why);
    }
    return gp_cuda_context_memory(ctx, dev, out);
}

/* ---- the CUDA context's cost, counted once ------------------------------------ */

uint64_t gp_context_overhead(const gp_device *dev, const gp_memory *mem,
                             gpuprobe_reserve_source *source)
{
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        *source = GPUPROBE_RESERVE_NONE;
        return 0;
    }
    if (mem->context_held) {
        *source = GPUPROBE_RESERVE_CONTEXT_HELD;
        return 0;
    }
    if (mem->context_bytes) {
        *source = GPUPROBE_RESERVE_MEASURED;
        return mem->context_bytes;
    }
    *source = GPUPROBE_RESERVE_DEFAULT;
    return GPUPROBE_DEFAULT_CONTEXT_RESERVE;
}

/* ---- what one allocation can get --------------------------------------------- */

uint64_t gp_alloc_allowance(uint64_t total)
{
    uint64_t a = total / 1024; /* below 2^54: the rounding cannot wrap */
    a = (a + GPUPROBE_ALLOC_PAGE - 1) / GPUPROBE_ALLOC_PAGE * GPUPROBE_ALLOC_PAGE;
    return a < GPUPROBE_ALLOC_ALLOWANCE_MIN ? GPUPROBE_ALLOC_ALLOWANCE_MIN : a;
}

uint64_t gp_alloc_room(const gp_device *dev, const gp_memory *mem, uint64_t reserve)
{
    uint64_t room = mem->available > reserve ? mem->available - reserve : 0;
    if (dev->kind == GPUPROBE_DEVICE_CPU)
        return room;
    room -= room % GPUPROBE_ALLOC_PAGE;
    uint64_t allowance = gp_alloc_allowance(mem->total);
    return room > allowance ? room - allowance : 0;
}

/* ---- public ---------------------------------------------------------------------- */

/* Store a field only if it lies entirely within the caller's info->size. */
#define PUT(info, field, value)                                                \
    do {                                                                       \
        if (GP_END_OF(gpuprobe_memory_info, field) <= (info)->size)            \
            (info)->field = (value);                                           \
    } while (0)

gpuprobe_status gp_memory_read(gpuprobe_context *ctx, size_t device,
                               unsigned flags, gp_memory *out)
{
    const gp_device *dev = NULL;
    gpuprobe_status st = gp_get_device(ctx, device, &dev);
    if (st != GPUPROBE_OK)
        return st;
    memset(out, 0, sizeof *out);

    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        gp_host_memory h;
        st = gp_host_memory_read(ctx, ctx->sysroot, &h);
        if (st != GPUPROBE_OK)
            return st;
        out->total = h.mem_total;
        out->available = h.mem_available;
        out->physical = h.mem_total;
        out->cgroup_limit = h.cgroup_limit;
        out->source = GPUPROBE_MEMORY_SOURCE_HOST;
        if (h.cgroup_limit != UINT64_MAX) {
            uint64_t room = h.cgroup_usage < h.cgroup_limit
                                ? h.cgroup_limit - h.cgroup_usage : 0;
            if (h.cgroup_limit < out->total) {
                out->total = h.cgroup_limit;
                out->flags |= GPUPROBE_MEMORY_CGROUP_LIMITED;
            }
            if (room < out->available) {
                out->available = room;
                out->flags |= GPUPROBE_MEMORY_CGROUP_LIMITED;
            }
        }
        if (out->available > out->total)
            out->available = out->total;
        out->used = out->total - out->available;
        return GPUPROBE_OK;
    }

    st = cuda_memory(ctx, dev, flags, out);
    if (st != GPUPROBE_OK)
        return st;
    /* A driver that reports more free memory than there is gets the total
     * (real devices and simulated ones alike). */
    if (out->available > out->total)
        out->available = out->total;
    out->physical = out->total;
    out->cgroup_limit = UINT64_MAX;
    out->context_bytes = dev->context_bytes;
    if (out->context_bytes)
        out->flags |= GPUPROBE_MEMORY_CONTEXT_MEASURED;
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_device_memory(gpuprobe_context *ctx, size_t device,
                                       gpuprobe_memory_info *info, unsigned flags)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!info)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_device_memory: info is NULL");
    if (flags & ~GPUPROBE_DEVICE_MEMORY_NO_CONTEXT)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_device_memory: flags must be 0 or "
                       "GPUPROBE_DEVICE_MEMORY_NO_CONTEXT, got 0x%x", flags);
    /* The 1.0 struct ends with flags. */
    gpuprobe_status st = GP_CHECK_SIZE(ctx, "gpuprobe_device_memory", "info", info->size,
                                       gpuprobe_memory_info, flags);
    if (st != GPUPROBE_OK)
        return st;
    gp_memory m;
    st = gp_memory_read(ctx, device, flags, &m);
    if (st != GPUPROBE_OK)
        return st;
    PUT(info, total_bytes, m.total);
    PUT(info, available_bytes, m.available);
    PUT(info, physical_bytes, m.physical);
    PUT(info, cgroup_limit_bytes, m.cgroup_limit);
    PUT(info, context_bytes, m.context_bytes);
    PUT(info, flags, m.flags);
    PUT(info, used_bytes, m.used);
    PUT(info, reserved_bytes, m.reserved);
    PUT(info, source, (uint32_t)m.source);
    PUT(info, context_held, (uint32_t)(m.context_held != 0));
    return gp_ok(ctx);
}
