/*
 * capacity.c - how large a model fits in a given amount of memory.
 *
 * The lesson's rule of thumb is "fp16 = 2 bytes per parameter". This file
 * turns it (and the inference and training rules documented in gpuprobe.h)
 * into exact integer arithmetic:
 *
 *   h        = storage size of the dtype in HALF bytes (int4 = 1, fp16 = 4,
 *              fp32 = tf32 = 8, fp64 = 16), so that int4 needs no fraction.
 *   weights  w(N) = ceil(N * h / 2)
 *   inference i(N) = ceil(6 * w(N) / 5)     (weights, rounded up, x 1.2)
 *   training t(N) = N * k                    (k = 16, or 32 for fp64)
 *
 * The inverse (largest N whose bytes fit in B) follows from ceil(x) <= B
 * <=> x <= B for integer B:
 *
 *   weights   N = floor(2B / h)
 *   inference w(N) <= floor(5B / 6), then as for weights
 *   training  N = floor(B / k)
 *
 * Every quotient is computed from B's own quotient and remainder so that no
 * intermediate product can wrap, even for B = UINT64_MAX. Parameter counts
 * are limited to GPUPROBE_MAX_PARAMS (10^15), which keeps every forward
 * product below 2^55.
 *
 * tf32 is a matmul compute mode whose values are stored as fp32, so its
 * weights and inference figures are fp32's (4 bytes per parameter); there is
 * no training rule for it, nor for the 8- and 4-bit types.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <string.h>

/* Validate a dtype/workload pair (and that there is somewhere to write). */
static gpuprobe_status check_rule(gpuprobe_dtype dtype, gpuprobe_workload workload,
                                  const void *out)
{
    if (!out || !gp_dtype_known(dtype) || !gp_workload_known(workload))
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (workload == GPUPROBE_WORKLOAD_TRAINING && gp_dtype_train_bytes(dtype) == 0)
        return GPUPROBE_ERR_UNSUPPORTED;
    return GPUPROBE_OK;
}

/* ceil(a / d) without computing a + d - 1 (which could wrap). */
static uint64_t div_ceil(uint64_t a, uint64_t d)
{
    return a / d + (a % d != 0);
}

/* floor(a * m / d) for small m and d (m, d <= 16), without forming a * m:
 * a = q d + r, so a m / d = q m + r m / d with r m < d m small. The caller
 * guarantees the result fits (checked with the bound below). */
static int mul_div_floor(uint64_t a, uint64_t m, uint64_t d, uint64_t *out)
{
    uint64_t q = a / d, r = a % d;
    if (q > (UINT64_MAX - (r * m) / d) / m)
        return -1;
    *out = q * m + (r * m) / d;
    return 0;
}

gpuprobe_status gpuprobe_capacity_bytes(uint64_t params, gpuprobe_dtype dtype,
                                        gpuprobe_workload workload,
                                        uint64_t *bytes)
{
    gpuprobe_status st = check_rule(dtype, workload, bytes);
    if (st != GPUPROBE_OK)
        return st;
    if (params > GPUPROBE_MAX_PARAMS)
        return GPUPROBE_ERR_OVERFLOW;

    /* params <= 10^15 < 2^50: every product below stays under 2^56. */
    uint64_t w = div_ceil(params * gp_dtype_half_bytes(dtype), 2);
    switch (workload) {
    case GPUPROBE_WORKLOAD_WEIGHTS:
        *bytes = w;
        break;
    case GPUPROBE_WORKLOAD_INFERENCE:
        *bytes = div_ceil(6 * w, 5);
        break;
    case GPUPROBE_WORKLOAD_TRAINING:
        *bytes = params * gp_dtype_train_bytes(dtype);
        break;
    }
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_capacity_params(uint64_t bytes, gpuprobe_dtype dtype,
                                         gpuprobe_workload workload,
                                         uint64_t *params)
{
    gpuprobe_status st = check_rule(dtype, workload, params);
    if (st != GPUPROBE_OK)
        return st;

    uint64_t n = 0;
    uint64_t w = bytes; /* the byte budget for the weights */
    switch (workload) {
    case GPUPROBE_WORKLOAD_TRAINING:
        n = bytes / gp_dtype_train_bytes(dtype);
        break;
    case GPUPROBE_WORKLOAD_INFERENCE:
        /* ceil(6 w / 5) <= B  <=>  w <= floor(5 B / 6); never wraps. */
        if (mul_div_floor(bytes, 5, 6, &w) != 0)
            return GPUPROBE_ERR_INTERNAL; /* unreachable: 5B/6 < B */
        /* fall through */
    case GPUPROBE_WORKLOAD_WEIGHTS:
        /* ceil(N h / 2) <= w  <=>  N <= floor(2 w / h). For h = 1 and
         * w >= 2^63 this does not fit 64 bits: far above the limit. */
        if (mul_div_floor(w, 2, gp_dtype_half_bytes(dtype), &n) != 0)
            return GPUPROBE_ERR_OVERFLOW;
        break;
    }
    if (n > GPUPROBE_MAX_PARAMS)
        return GPUPROBE_ERR_OVERFLOW;
    *params = n;
    return GPUPROBE_OK;
}

gpuprobe_status gp_capacity_of(const gp_device *dev, const gp_memory *mem,
                               gpuprobe_dtype dtype, gpuprobe_workload workload,
                               gpuprobe_capacity *cap)
{
    gpuprobe_reserve_source source;
    cap->total_bytes = mem->total;
    cap->free_bytes = mem->available;
    cap->reserve_bytes = gp_context_overhead(dev, mem, &source);
    cap->reserve_source = (uint32_t)source;
    cap->usable_bytes = gp_alloc_room(dev, mem, cap->reserve_bytes);
    return gpuprobe_capacity_params(cap->usable_bytes, dtype, workload, &cap->max_params);
}

/* The arguments of gpuprobe_device_capacity(), but the device. */
static gpuprobe_status capacity_args(gpuprobe_context *ctx, gpuprobe_dtype dtype,
                                     gpuprobe_workload workload, unsigned flags,
                                     const gpuprobe_capacity *out)
{
    if (!out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_device_capacity: out is NULL");
    /* The 1.0 struct ends with reserve_source. */
    gpuprobe_status st = GP_CHECK_SIZE(ctx, "gpuprobe_device_capacity", "out", out->size,
                                       gpuprobe_capacity, reserve_source);
    if (st != GPUPROBE_OK)
        return st;
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_device_capacity: flags must be 0, not 0x%x",
                       flags);
    st = check_rule(dtype, workload, out);
    if (st == GPUPROBE_ERR_INVALID_ARGUMENT)
        return gp_fail(ctx, st,
                       "gpuprobe_device_capacity: unknown dtype %d or "
                       "workload %d",
                       (int)dtype, (int)workload);
    if (st != GPUPROBE_OK) {
        char list[64];
        gp_format_dtypes(list, sizeof list, GP_DTYPES_TRAINING, " and ");
        return gp_fail(ctx, st,
                       "gpuprobe_device_capacity: no %s rule for %s (defined "
                       "for %s only)",
                       gpuprobe_workload_name(workload),
                       gpuprobe_dtype_name(dtype), list);
    }
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_device_capacity(gpuprobe_context *ctx, size_t device,
                                         gpuprobe_dtype dtype,
                                         gpuprobe_workload workload,
                                         unsigned flags, gpuprobe_capacity *out)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    const gp_device *dev = NULL;
    gp_memory mem;
    gpuprobe_status st = capacity_args(ctx, dtype, workload, flags, out);
    if (st == GPUPROBE_OK)
        st = gp_get_device(ctx, device, &dev);
    if (st == GPUPROBE_OK)
        st = gp_memory_read(ctx, device, 0, &mem);
    if (st != GPUPROBE_OK)
        return st;

    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    st = gp_capacity_of(dev, &mem, dtype, workload, &cap);
    if (st == GPUPROBE_ERR_OVERFLOW)
        return gp_fail(ctx, st,
                       "%s: %llu usable bytes hold more than 10^15 %s "
                       "parameters (GPUPROBE_MAX_PARAMS)",
                       dev->spec, (unsigned long long)cap.usable_bytes,
                       gpuprobe_dtype_name(dtype));
    if (st != GPUPROBE_OK)
        return gp_fail(ctx, st, "gpuprobe_device_capacity: %s",
                       gpuprobe_status_string(st));

    /* Write the 1.0 fields only: out->size holds them (checked above). */
    out->total_bytes = cap.total_bytes;
    out->free_bytes = cap.free_bytes;
    out->reserve_bytes = cap.reserve_bytes;
    out->usable_bytes = cap.usable_bytes;
    out->max_params = cap.max_params;
    out->reserve_source = cap.reserve_source;
    return gp_ok(ctx);
}
