/*
 * names.h - one list per public enum that has names: the constant, its
 * token and its text (and, for dtypes, the storage size and training
 * rule, and where the timed matmul runs it). names.c builds its tables
 * and a switch from each list; the switch has no default, so -Wswitch (in
 * -Wall, an error in this build) names any enumerator added to gpuprobe.h
 * and missing here, and a constant listed twice is a duplicate case.
 * format.c builds the word lists and the SIMD words from them. The lists
 * are the only place these words are written, for the library and for
 * the commands (tools/), which include this header. Ground floor: see
 * docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_NAMES_H
#define GPUPROBE_NAMES_H

#include "gpuprobe.h"

/* X(constant, name, text) */
#define GP_STATUS_MAP(X)                                                      \
    X(GPUPROBE_OK, "ok", "success")                                           \
    X(GPUPROBE_ERR_INVALID_ARGUMENT, "invalid_argument", "invalid argument")  \
    X(GPUPROBE_ERR_OUT_OF_MEMORY, "out_of_memory", "out of host memory")      \
    X(GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY, "device_out_of_memory",              \
      "out of device memory")                                                 \
    X(GPUPROBE_ERR_NOT_FOUND, "not_found", "no such device")                  \
    X(GPUPROBE_ERR_UNSUPPORTED, "unsupported",                                \
      "not supported by this device or build")                               \
    X(GPUPROBE_ERR_CUDA_UNAVAILABLE, "cuda_unavailable", "CUDA is not usable") \
    X(GPUPROBE_ERR_CUDA, "cuda", "a CUDA call failed")                        \
    X(GPUPROBE_ERR_NO_FIT, "no_fit", "no device meets the requirements")      \
    X(GPUPROBE_ERR_VERIFY_FAILED, "verify_failed", "result failed verification") \
    X(GPUPROBE_ERR_OVERFLOW, "overflow", "size too large")                    \
    X(GPUPROBE_ERR_SYSTEM, "system", "operating-system query failed")         \
    X(GPUPROBE_ERR_INTERNAL, "internal", "internal error in libgpuprobe")

/* X(constant, name, text) */
#define GP_CUDA_CAUSE_MAP(X)                                                  \
    X(GPUPROBE_CUDA_AVAILABLE, "available", "CUDA is available")              \
    X(GPUPROBE_CUDA_NOT_BUILT, "not_built",                                   \
      "libgpuprobe was built without CUDA support")                          \
    X(GPUPROBE_CUDA_DISABLED, "disabled", "CUDA was turned off by the user")  \
    X(GPUPROBE_CUDA_NO_RUNTIME, "no_runtime", "no CUDA runtime library found") \
    X(GPUPROBE_CUDA_NO_DRIVER, "no_driver", "no NVIDIA driver installed")     \
    X(GPUPROBE_CUDA_NO_KERNEL_DRIVER, "no_kernel_driver",                     \
      "the NVIDIA kernel driver is not running")                             \
    X(GPUPROBE_CUDA_DRIVER_TOO_OLD, "driver_too_old",                         \
      "the NVIDIA driver is too old for the CUDA runtime")                   \
    X(GPUPROBE_CUDA_NO_DEVICE, "no_device", "no CUDA device found")           \
    X(GPUPROBE_CUDA_DEVICES_HIDDEN, "devices_hidden",                         \
      "CUDA devices are hidden by CUDA_VISIBLE_DEVICES")                     \
    X(GPUPROBE_CUDA_NO_PERMISSION, "no_permission",                           \
      "no permission to open the NVIDIA device files")                       \
    X(GPUPROBE_CUDA_OTHER, "other", "CUDA failed to initialise")

/* Where the timed matmul runs a dtype: bits of GP_DTYPE_MAP's last column. */
#define GP_MATMUL_CPU 1u /* OpenBLAS (cpu_matmul.c) */
#define GP_MATMUL_GPU 2u /* cuBLAS (cuda_matmul.c) */
#define GP_MATMUL_CPU_BF16 4u /* the library's bf16 gemm, where the CPU has AMX-BF16 or AVX512-BF16 (cpu_bf16.c) */

/*
 * X(constant, name, half_bytes, train_bytes, matmul): storage size in half
 * bytes (int4 = 1, fp16 = 4), AdamW mixed-precision training bytes per
 * parameter (0: no training rule; see capacity.c), and the GP_MATMUL_*
 * backends that run it (0: capacity only).
 */
#define GP_DTYPE_MAP(X)                                                       \
    /* fp32: 4 w + 4 g + 8 Adam moments; fp64: all of it in fp64 */           \
    X(GPUPROBE_DTYPE_FP32, "fp32", 8, 16, GP_MATMUL_CPU | GP_MATMUL_GPU)     \
    X(GPUPROBE_DTYPE_FP64, "fp64", 16, 32, GP_MATMUL_CPU)                     \
    /* tf32: a compute mode over fp32 storage */                              \
    X(GPUPROBE_DTYPE_TF32, "tf32", 8, 0, GP_MATMUL_GPU)                       \
    /* fp16, bf16: 2 w + 2 g + 4 master + 8 Adam */                           \
    X(GPUPROBE_DTYPE_FP16, "fp16", 4, 16, GP_MATMUL_GPU)                      \
    X(GPUPROBE_DTYPE_BF16, "bf16", 4, 16, GP_MATMUL_GPU | GP_MATMUL_CPU_BF16) \
    X(GPUPROBE_DTYPE_FP8, "fp8", 2, 0, 0)                                     \
    X(GPUPROBE_DTYPE_INT8, "int8", 2, 0, 0)                                   \
    X(GPUPROBE_DTYPE_INT4, "int4", 1, 0, 0)

/* X(constant, name) */
#define GP_WORKLOAD_MAP(X)                                                    \
    X(GPUPROBE_WORKLOAD_WEIGHTS, "weights")                                   \
    X(GPUPROBE_WORKLOAD_INFERENCE, "inference")                               \
    X(GPUPROBE_WORKLOAD_TRAINING, "training")

/* X(constant, name, label): the token (JSON, labels) and the words for
 * people. */
#define GP_SIMD_MAP(X)                                                        \
    X(GPUPROBE_SIMD_NONE, "none", "baseline")                                 \
    X(GPUPROBE_SIMD_SSE4_2, "sse4_2", "SSE4.2")                               \
    X(GPUPROBE_SIMD_AVX, "avx", "AVX")                                        \
    X(GPUPROBE_SIMD_AVX2_FMA, "avx2_fma", "AVX2+FMA")                         \
    X(GPUPROBE_SIMD_AVX512, "avx512", "AVX-512")

/* Defines `int fn(type v)`: 1 when v is one of MAP's constants. Its switch
 * has no default, so in a file that makes -Wswitch an error (names.c,
 * format.c) a constant of gpuprobe.h that MAP lacks stops the build. */
#define GP_KNOWN_CASE(c, ...)                                                 \
    case c:                                                                   \
        return 1;
#define GP_KNOWN_FN(fn, type, MAP)                                            \
    int fn(type v)                                                            \
    {                                                                         \
        switch (v) {                                                          \
            MAP(GP_KNOWN_CASE)                                                \
        }                                                                     \
        return 0;                                                             \
    }

/* X(constant, name): the bandwidth tests (1.2). */
#define GP_BANDWIDTH_TEST_MAP(X)                                              \
    X(GPUPROBE_BANDWIDTH_TEST_READ, "read")                                   \
    X(GPUPROBE_BANDWIDTH_TEST_COPY, "copy")                                   \
    X(GPUPROBE_BANDWIDTH_TEST_TRIAD, "triad")                                 \
    X(GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, "h2d_pinned")                       \
    X(GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE, "h2d_pageable")                   \
    X(GPUPROBE_BANDWIDTH_TEST_D2H_PINNED, "d2h_pinned")                       \
    X(GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE, "d2h_pageable")                   \
    X(GPUPROBE_BANDWIDTH_TEST_READ_STREAMS, "read_streams")

/* names.c (the library only; the commands use format.h): the dtype's
 * columns, 0 for a value outside the enum. */
unsigned gp_dtype_half_bytes(gpuprobe_dtype dtype);
unsigned gp_dtype_train_bytes(gpuprobe_dtype dtype);
unsigned gp_dtype_matmul(gpuprobe_dtype dtype);
/* 1 when the value is one of the enum's constants. */
int gp_dtype_known(gpuprobe_dtype dtype);
int gp_workload_known(gpuprobe_workload workload);
int gp_bandwidth_test_known(gpuprobe_bandwidth_test test);
/* How many bandwidth tests there are (dense from 0). */
#define GP_BW_NTESTS 8

#endif
