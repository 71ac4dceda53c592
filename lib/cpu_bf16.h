/*
 * cpu_bf16.h - the CPU's bf16 gemm of the library's own (cpu_bf16.c), on
 * Intel's AMX tiles or with AVX512-BF16: whether this process can run it,
 * with which kernel, its peak per cycle, and the gemm.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CPU_BF16_H
#define GPUPROBE_CPU_BF16_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* The kernels. */
#define GP_BF16_AVX512 1 /* VDPBF16PS on zmm registers */
#define GP_BF16_AMX 2    /* TDPBF16PS on AMX tiles */

/* FLOP per cycle per core of TDPBF16PS: 1024 bf16 operations, i.e. 512
 * multiply-adds (Intel: AMX on 4th generation Xeon, "1,024 BF16 operations
 * per cycle"; a 16 x 16 x 32 tile product, 8192 multiply-adds, issues every
 * 16 cycles). The peak the result reports for bf16 on the CPU with AMX. */
#define GP_AMX_BF16_FLOPS_PER_CYCLE 1024.0
/* VDPBF16PS on a zmm register: 32 multiply-adds, twice an fp32 FMA's 16;
 * with two FMA units, as the fp32 AVX-512 peak assumes (numbers.c), 128
 * FLOP per cycle (one-unit parts, and AMD Zen 4's 256-bit units, reach
 * half). */
#define GP_AVX512_BF16_FLOPS_PER_CYCLE 128.0

/* Which kernel this process runs the bf16 gemm with for ctx: GP_BF16_AMX
 * where the CPU has AMX-BF16 and Linux grants it, else GP_BF16_AVX512 where
 * it has AVX512-BF16; 0 when neither, and why[] (n bytes) says why:
 * GPUPROBE_CPU_AMX in ctx's environment (which turns both off), the build,
 * the CPU (cpuid), Linux (XCR0, or the AMX state permission that the
 * first call asks for the process). */
int gp_cpu_bf16(const gpuprobe_context *ctx, char *why, size_t n);
/* "AMX-BF16", "AVX512-BF16"; "" for anything else. */
const char *gp_bf16_kernel_name(int kernel);
/* The kernel's FLOP per cycle per core (above); 0 for anything else. */
double gp_bf16_flops_per_cycle(int kernel);
/* Test seam: GP_BF16_AMX or GP_BF16_AVX512 makes gp_cpu_bf16() choose that
 * kernel, or none (with the reason) where it does not run; 0, the
 * default, chooses as above. */
extern int gp_test_bf16_kernel;

/* A gemm of its own threads: C (m x n, fp32) = A (m x k, bf16) B (k x n,
 * bf16), row-major and dense, each call. */
typedef struct gp_bf16_gemm gp_bf16_gemm;

/* The threads an m x n x k product uses of THREADS: at most 256, one per
 * block of 32 columns at most, one for a small product (docs/matmul.md). */
size_t gp_bf16_gemm_threads(size_t threads, size_t m, size_t n, size_t k);
/* The memory the gemm takes beside A, B and C on USED threads: the packed
 * panels and each thread's stack. */
uint64_t gp_bf16_gemm_cost(size_t used);

/* Its threads (gp_bf16_gemm_threads() of THREADS, the caller's included)
 * started, each with its packing buffers, to run KERNEL (what
 * gp_cpu_bf16() returned, never 0). *used: how many. */
gpuprobe_status gp_bf16_gemm_open(gpuprobe_context *ctx, int kernel, size_t threads, size_t m,
                                  size_t n, size_t k, const uint16_t *a, const uint16_t *b,
                                  float *c, gp_bf16_gemm **out, size_t *used);
/* One product; returns when every thread has done its part. */
void gp_bf16_gemm_run(gp_bf16_gemm *g);
/* Its threads stopped and joined, its memory freed. NULL is ignored. */
void gp_bf16_gemm_close(gp_bf16_gemm *g);

#endif
