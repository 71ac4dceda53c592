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
 * What OpenBLAS maps (0.3.21, driver/others/memory.c and blas_server.c;
 * measured on Debian 12's libopenblas0-pthread with /proc/self/status):
 * every thread that runs a level-3 call - the caller, and each thread of
 * OpenBLAS's pool - maps one buffer of BUFFER_SIZE (common_x86_64.h:
 * 32 << 22 = 128 MiB) plus one page, the first time, and keeps it until the
 * thread ends; the pool's threads (all but the caller) are started when the
 * library is loaded, or when a larger thread count is set, each with its
 * own stack. When the buffer cannot be mapped, OpenBLAS retries forever (a
 * hang at 100% CPU, and an exit that never ends). So loading it and every
 * CPU matmul are checked against the address-space limits first (see
 * gp_openblas_get() and gp_openblas_cost()).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CPU_BLAS_H
#define GPUPROBE_CPU_BLAS_H

#include "internal.h"

#include <cblas.h>

/* The SONAME OpenBLAS is opened by. */
#define GP_OPENBLAS_SONAME "libopenblas.so.0"

/* One thread's buffer as mapped: BUFFER_SIZE of OpenBLAS 0.3.21's
 * common_<arch>.h plus a page; architectures not listed get the largest
 * (POWER's 256 MiB). */
#if defined(__x86_64__) || defined(__s390x__)
#define GP_OPENBLAS_BUFFER ((UINT64_C(32) << 22) + 4096)
#elif defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64) || \
    defined(__loongarch64)
#define GP_OPENBLAS_BUFFER ((UINT64_C(32) << 20) + 4096)
#else
#define GP_OPENBLAS_BUFFER ((UINT64_C(64) << 22) + 4096)
#endif
/* The library's own mappings: libopenblas.so.0 with libgfortran and
 * libquadmath add 47 MiB to VmSize and 8 MiB to VmData on Debian 12
 * (x86-64); counted as 64 MiB of both. */
#define GP_OPENBLAS_IMAGE (UINT64_C(64) << 20)
/* A bound on OpenBLAS's GEMM blocking P and Q (0.3.21's param.h: at most
 * 768 on x86-64), for the part of the buffers a call really touches. */
#define GP_OPENBLAS_BLOCK 1024

typedef struct gp_openblas {
    void *lib;
    int max_threads;  /* MAX_THREADS of its build config; 0 if not said */
    /* OpenBLAS's own view of its pool (exported variables of its pthread
     * build; NULL when absent): the threads it holds counting the caller,
     * and whether they are running (a fork() stops them until the next
     * threaded call). */
    const int *pool_threads;  /* blas_num_threads */
    const int *pool_running;  /* blas_server_avail */
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(cblas_dgemm) *dgemm;
    __typeof__(openblas_get_num_threads) *get_num_threads;
    __typeof__(openblas_set_num_threads) *set_num_threads;
    __typeof__(openblas_get_corename) *get_corename;
    __typeof__(openblas_get_config) *get_config;
} gp_openblas;

/*
 * OpenBLAS's functions, loaded once per context. The library is never
 * closed again: unloading OpenBLAS under its own thread pool is not safe,
 * and the loader keeps one copy per process whatever the number of
 * contexts. When this call is what brings OpenBLAS into the process, the
 * address space its pool will map is checked against RLIMIT_AS and
 * RLIMIT_DATA first (GPUPROBE_ERR_OUT_OF_MEMORY naming the limit, nothing
 * loaded), and under such a limit the call waits (at most a second) until
 * the pool's threads have mapped their buffers, so that later checks see
 * them. Other failures (library or a symbol missing) are
 * GPUPROBE_ERR_UNSUPPORTED with a message naming what is missing.
 */
gpuprobe_status gp_openblas_get(gpuprobe_context *ctx, const gp_openblas **out);

/* gp_openblas_release(): internal.h (context.c calls it). */

/* "OpenBLAS 0.3.21 Haswell": version from the build config plus the core
 * selected at run time. */
void gp_openblas_name(const gp_openblas *blas, char *dst, size_t size);

/*
 * What a gemm of m x k times k x n (row-major) with `threads` threads (0:
 * the count in force) adds to A, B and C:
 *  - address_space: the calling thread's buffer, and a buffer and a stack
 *    for each pool thread the run may have to start (a larger count, or a
 *    pool stopped by fork(); all of them when OpenBLAS does not show its
 *    pool). The caller's buffer is counted every time: whether the thread
 *    already has one cannot be seen, so under an address-space limit the
 *    check may refuse up to one buffer early;
 *  - memory: the packed panels OpenBLAS touches in those buffers, at most
 *    elem x min(Q, k) x (threads x min(P, n) + m) bytes with P, Q <=
 *    GP_OPENBLAS_BLOCK (and never more than the buffers).
 * threads is capped at the build's MAX_THREADS, as OpenBLAS does.
 */
typedef struct gp_blas_cost {
    int threads;            /* the threads the run will use */
    int new_threads;        /* pool threads it may start */
    uint64_t address_space;
    uint64_t memory;
} gp_blas_cost;
void gp_openblas_cost(const gp_openblas *blas, int64_t threads, int64_t m,
                      int64_t n, int64_t k, size_t elem, gp_blas_cost *out);

#endif
