/*
 * format.h - what the library and the commands (tools/) both write for
 * people, written by one piece of code: bytes and counts in decimal units,
 * CUDA version numbers, lists of dtype names, the SIMD words. format.c
 * depends on nothing but the C library, gpuprobe.h and names.h, so the
 * commands' helper library compiles the same file in; its functions are
 * hidden (never exported from libgpuprobe.so). Ground floor: see
 * docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_FORMAT_H
#define GPUPROBE_FORMAT_H

#include "gpuprobe.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GP_HIDDEN __attribute__((visibility("hidden")))
#else
#define GP_HIDDEN
#endif

/* "999 B", "1.0 kB", "12.4 GB" up to "EB": decimal units, one decimal,
 * rounded half up in integer arithmetic (12,350,000,000 B is "12.4 GB").
 * buf is always terminated (size > 0), cut to fit. */
GP_HIDDEN void gp_format_bytes(char *buf, size_t size, uint64_t bytes);
/* The same rule for counts: "999", "1.0 K", "11.4 B" (billion) up to "Q". */
GP_HIDDEN void gp_format_count(char *buf, size_t size, uint64_t count);
/* A CUDA version number as text: "12.4" from 12040 (1000 * major + 10 *
 * minor); "unknown" for 0 or less. */
GP_HIDDEN void gp_format_cuda_version(char *buf, size_t size, int version);

/* Which dtypes a list names (the columns of GP_DTYPE_MAP). */
typedef enum gp_dtype_set {
    GP_DTYPES_ALL = 0,
    GP_DTYPES_TRAINING = 1,   /* those with a training rule */
    GP_DTYPES_MATMUL = 2,     /* those the timed matmul runs anywhere */
    GP_DTYPES_MATMUL_CPU = 3, /* ... on the CPU */
    GP_DTYPES_MATMUL_GPU = 4  /* ... on a CUDA device */
} gp_dtype_set;
/* The names of a set in the enum's order, separated by ", " and by `last`
 * before the final one: "fp32, fp64, fp16 and bf16" (TRAINING, " and "). */
GP_HIDDEN void gp_format_dtypes(char *buf, size_t size, gp_dtype_set set, const char *last);

/* A gpuprobe_simd value's token ("avx2_fma") and label ("AVX2+FMA");
 * "unknown" for a value outside the enum. */
GP_HIDDEN const char *gp_simd_name(int64_t simd);
GP_HIDDEN const char *gp_simd_label(int64_t simd);

#endif
