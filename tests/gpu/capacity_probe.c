/*
 * capacity_probe.c - capacity prediction against reality: on a real GPU
 * (scripts/gpu-check), and on the simulated NVIDIA stack in every test run
 * (scenario.capacity_probe.*, whose driver hands memory out in 2 MiB pages
 * and keeps a part of the free memory back, as the real one does).
 *
 * Asks libgpuprobe for the largest fp16 weight buffer that fits on cuda:0,
 * allocates exactly that with plain cudaMalloc (never managed memory), then
 * tries 2% more, then searches for the largest single allocation that really
 * succeeds, exactly to the driver's 2 MiB page (allocations take whole
 * pages, so the largest is a whole number of them). Prints one JSON object.
 * Exit 0: the predicted size itself allocates, and it is never above the
 * largest allocation and within 2% of it; 1: not; 77: no usable GPU
 * (skipped).
 *
 * Two predictions: the first before this program has a CUDA context (free
 * memory through NVML, the context's cost reserved at its default: how a
 * probe sees a GPU it is about to use), reported; the second once the
 * runtime made the context the allocations run in (nothing more reserved),
 * which is held to the 2%.
 *
 * The CUDA runtime is opened with dlopen like the library does, so this
 * program builds without linking CUDA.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuprobe.h"

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);

static void *open_runtime(void)
{
    const char *dir = secure_getenv("GPUPROBE_CUDA_LIBDIR");
    static const int majors[] = {13, 12, 11};
    char name[4200];
    for (size_t i = 0; i < sizeof majors / sizeof majors[0]; i++) {
        if (dir && dir[0] == '/')
            snprintf(name, sizeof name, "%s/libcudart.so.%d", dir, majors[i]);
        else
            snprintf(name, sizeof name, "libcudart.so.%d", majors[i]);
        void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

int main(void)
{
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return 1;
    gpuprobe_cuda_cause cause;
    const char *detail = "";
    gpuprobe_cuda_status(ctx, &cause, &detail);
    if (cause != GPUPROBE_CUDA_AVAILABLE) {
        printf("{\"skipped\": true, \"reason\": \"%s\"}\n", gpuprobe_cuda_cause_name(cause));
        gpuprobe_context_destroy(ctx);
        return 77;
    }
    size_t dev = 0;
    if (gpuprobe_select(ctx, "cuda:0", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL) != GPUPROBE_OK) {
        fprintf(stderr, "select cuda:0: %s\n", gpuprobe_last_error(ctx));
        return 1;
    }
    gpuprobe_capacity cap0 = GPUPROBE_CAPACITY_INIT, cap = GPUPROBE_CAPACITY_INIT;
    if (gpuprobe_device_capacity(ctx, dev, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0,
                                 &cap0) != GPUPROBE_OK) {
        fprintf(stderr, "capacity: %s\n", gpuprobe_last_error(ctx));
        return 1;
    }
    uint64_t predicted0 = 0;
    gpuprobe_capacity_bytes(cap0.max_params, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, &predicted0);

    void *rt = open_runtime();
    if (!rt) {
        fprintf(stderr, "cannot open the CUDA runtime: %s\n", dlerror());
        return 1;
    }
    malloc_fn cuda_malloc = (malloc_fn)(uintptr_t)dlsym(rt, "cudaMalloc");
    free_fn cuda_free = (free_fn)(uintptr_t)dlsym(rt, "cudaFree");
    int (*set_device)(int) = (int (*)(int))(uintptr_t)dlsym(rt, "cudaSetDevice");
    int (*get_last)(void) = (int (*)(void))(uintptr_t)dlsym(rt, "cudaGetLastError");
    if (!cuda_malloc || !cuda_free || !set_device || !get_last)
        return 1;
    set_device(0); /* the runtime's context, which the allocations use */
    if (gpuprobe_device_capacity(ctx, dev, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0,
                                 &cap) != GPUPROBE_OK) {
        fprintf(stderr, "capacity: %s\n", gpuprobe_last_error(ctx));
        return 1;
    }
    uint64_t predicted = 0;
    gpuprobe_capacity_bytes(cap.max_params, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, &predicted);

    void *p = NULL;
    int ok_pred = cuda_malloc(&p, (size_t)predicted) == 0;
    if (ok_pred)
        cuda_free(p);
    get_last();
    uint64_t plus2 = predicted + predicted / 50;
    p = NULL;
    int ok_plus2 = cuda_malloc(&p, (size_t)plus2) == 0;
    if (ok_plus2)
        cuda_free(p);
    get_last();

    /* The largest single allocation that succeeds, in whole pages: lo
     * pages allocate (none trivially), hi pages do not (more than the
     * total cannot). */
    const uint64_t page = GPUPROBE_ALLOC_PAGE;
    uint64_t lo = 0, hi = cap.total_bytes / page + 1;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        p = NULL;
        if (cuda_malloc(&p, (size_t)(mid * page)) == 0) {
            cuda_free(p);
            lo = mid;
        } else {
            hi = mid;
        }
        get_last();
    }
    lo *= page;
    double ratio = lo ? (double)predicted / (double)lo : 0.0;
    double ratio0 = lo ? (double)predicted0 / (double)lo : 0.0;
    /* Never above, and within 2%: the ratio, and the predicted size itself. */
    int pass = ok_pred && predicted <= lo && ratio >= 0.98;
    printf("{\"device\": \"cuda:0\", \"total_bytes\": %llu, \"free_bytes\": %llu, "
           "\"reserve_bytes\": %llu, \"reserve_source\": %u, \"predicted_bytes\": %llu, "
           "\"predicted_params_fp16\": %llu, \"predicted_allocatable\": %s, "
           "\"plus_2pct_allocatable\": %s, \"max_allocatable_bytes\": %llu, "
           "\"search_step_bytes\": %llu, "
           "\"predicted_over_max\": %.6f, \"free_without_context_bytes\": %llu, "
           "\"reserve_without_context_bytes\": %llu, \"predicted_without_context_bytes\": %llu, "
           "\"without_context_over_max\": %.6f, \"pass\": %s}\n",
           (unsigned long long)cap.total_bytes, (unsigned long long)cap.free_bytes,
           (unsigned long long)cap.reserve_bytes, cap.reserve_source,
           (unsigned long long)predicted, (unsigned long long)cap.max_params,
           ok_pred ? "true" : "false", ok_plus2 ? "true" : "false",
           (unsigned long long)lo, (unsigned long long)page, ratio, (unsigned long long)cap0.free_bytes,
           (unsigned long long)cap0.reserve_bytes, (unsigned long long)predicted0, ratio0,
           pass ? "true" : "false");
    gpuprobe_context_destroy(ctx);
    dlclose(rt);
    return pass ? 0 : 1;
}
