/*
 * cpu_amx.h - the CPU's bf16 gemm of the library's own, on Intel's AMX
 * tiles (cpu_amx.c): whether this process can run it, and the gemm.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CPU_AMX_H
#define GPUPROBE_CPU_AMX_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* FLOP per cycle per core of TDPBF16PS: 1024 bf16 operations, i.e. 512
 * multiply-adds (Intel: AMX on 4th generation Xeon, "1,024 BF16 operations
 * per cycle"; a 16 x 16 x 32 tile product, 8192 multiply-adds, issues every
 * 16 cycles). The peak the result reports for bf16 on the CPU. */
#define GP_AMX_BF16_FLOPS_PER_CYCLE 1024.0

/* Can this process run the bf16 gemm for ctx? 1 yes; 0 no, and why[] (n
 * bytes) says why: GPUPROBE_CPU_AMX in ctx's environment, the build, the
 * CPU (cpuid), Linux (XCR0, or the AMX state permission that the first
 * call asks for the process). */
int gp_amx_bf16(const gpuprobe_context *ctx, char *why, size_t n);

/* A gemm of its own threads: C (m x n, fp32) = A (m x k, bf16) B (k x n,
 * bf16), row-major and dense, each call. */
typedef struct gp_amx_gemm gp_amx_gemm;

/* The threads an m x n x k product uses of THREADS: at most 256, one per
 * block of 32 columns at most, one for a small product (docs/matmul.md). */
size_t gp_amx_gemm_threads(size_t threads, size_t m, size_t n, size_t k);
/* The memory the gemm takes beside A, B and C on USED threads: the packed
 * panels and each thread's stack. */
uint64_t gp_amx_gemm_cost(size_t used);

/* Its threads (gp_amx_gemm_threads() of THREADS, the caller's included)
 * started, each with its packing buffers; only when gp_amx_bf16() said
 * yes. *used: how many. */
gpuprobe_status gp_amx_gemm_open(gpuprobe_context *ctx, size_t threads, size_t m, size_t n,
                                 size_t k, const uint16_t *a, const uint16_t *b, float *c,
                                 gp_amx_gemm **out, size_t *used);
/* One product; returns when every thread has done its part. */
void gp_amx_gemm_run(gp_amx_gemm *g);
/* Its threads stopped and joined, its memory freed. NULL is ignored. */
void gp_amx_gemm_close(gp_amx_gemm *g);

#endif
