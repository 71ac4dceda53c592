/*
 * cpu_blas.h - OpenBLAS, opened with dlopen at first use.
 *
 * libgpuprobe does not link OpenBLAS: loading it starts its thread pool and
 * costs ~3 ms and several MiB before main() even runs, which every program
 * that only asks "is CUDA usable?" would pay. It is opened by its SONAME
 * (libopenblas.so.0) the first time a call needs it: a CPU matmul, or the
 * BLAS attributes of the CPU device. cblas.h is used for the prototypes
 * only.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CPU_BLAS_H
#define GPUPROBE_CPU_BLAS_H

#include "internal.h"

#include <cblas.h>

/* The SONAME OpenBLAS is opened by. */
#define GP_OPENBLAS_SONAME "libopenblas.so.0"

typedef struct gp_openblas {
    void *lib;
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(cblas_dgemm) *dgemm;
    __typeof__(openblas_get_num_threads) *get_num_threads;
    __typeof__(openblas_set_num_threads) *set_num_threads;
    __typeof__(openblas_get_corename) *get_corename;
    __typeof__(openblas_get_config) *get_config;
} gp_openblas;

/*
 * OpenBLAS's functions, loaded once per context. On failure (library or a
 * symbol missing) the status is GPUPROBE_ERR_UNSUPPORTED with a message
 * naming what is missing. The library is never closed again: unloading
 * OpenBLAS under its own thread pool is not safe, and the loader keeps one
 * copy per process whatever the number of contexts.
 */
gpuprobe_status gp_openblas_get(gpuprobe_context *ctx, const gp_openblas **out);

/* Free the per-context table (the library stays loaded). NULL is accepted. */
void gp_openblas_release(gp_openblas *blas);

/* "OpenBLAS 0.3.21 Haswell": version from the build config plus the core
 * selected at run time. */
void gp_openblas_name(const gp_openblas *blas, char *dst, size_t size);

#endif
