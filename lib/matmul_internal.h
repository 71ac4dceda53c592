/*
 * matmul_internal.h - internal interface of the timed matmul: statistics
 * helpers (stats.c), number formats and the input generator (matmul.c), the
 * job shared by the protocol (matmul.c) and its backends (cpu_matmul.c,
 * cuda_matmul.c), and the matmul test seam. Not installed.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_MATMUL_INTERNAL_H
#define GPUPROBE_MATMUL_INTERNAL_H

#include "internal.h"

#include <time.h>

#include <stddef.h>
#include <stdint.h>

/* ---- stats.c: statistics over n doubles. n == 0 gives NaN (stddev: 0 for
 * n < 2). None of them allocates. ---- */
double gp_stats_min(const double *v, size_t n);
double gp_stats_max(const double *v, size_t n);
double gp_stats_mean(const double *v, size_t n);
/* Sample standard deviation (divides by n - 1); 0 for n < 2. */
double gp_stats_stddev(const double *v, size_t n);
/* Median; sorts v in place (ascending). Even n: mean of the two middle values. */
double gp_stats_median_inplace(double *v, size_t n);

/* ---- matmul.c: number formats ---- */
/* fp32 -> IEEE binary16 / bfloat16, round to nearest, ties to even;
 * overflow gives infinity, NaN stays a (quiet) NaN with its sign. */
uint16_t gp_f32_to_f16(float f);
uint16_t gp_f32_to_bf16(float f);
/* Exact widening conversions. */
float gp_f16_to_f32(uint16_t h);
float gp_bf16_to_f32(uint16_t h);

/* Element types of the buffers a backend hands to verification. */
typedef enum gp_elem {
    GP_ELEM_F32 = 0,
    GP_ELEM_F64 = 1,
    GP_ELEM_F16 = 2,
    GP_ELEM_BF16 = 3
} gp_elem;
size_t gp_elem_size(gp_elem e);
double gp_elem_get(const void *buf, gp_elem e, size_t idx);
void gp_elem_set(void *buf, gp_elem e, size_t idx, double v);

/* splitmix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator. */
uint64_t gp_splitmix64(uint64_t *state);
/* Fill buf[0..count) with seeded uniform values in (-1, 1): zero-mean and
 * never exactly 0 (odd multiples of 2^-23, or of 2^-52 for F64), so every
 * value is exact in the element type before any 16-bit rounding. F16
 * and BF16 elements are the round-to-nearest-even images of such fp32
 * values. `stream` separates the sequences of A and B. */
void gp_fill_random(void *buf, gp_elem e, size_t count, uint64_t seed,
                    uint64_t stream);

/* The tolerance on |c - ref| / sum_k |a_ik||b_kj| for a dtype, depth k
 * and spread R (the largest sqrt(sum_j S_j^2) / sum_j |a_ij b_jk| over the
 * sampled entries, S_j the partial sums; used by fp32 and fp64 only). See
 * the derivation in matmul.c. */
double gp_matmul_tolerance(gpuprobe_dtype dtype, int64_t k, double spread);

/* Theoretical peaks, FLOP per clock: per core (CPU, by gpuprobe_simd) and
 * per SM (CUDA, by compute capability). 0 when unknown. */
double gp_cpu_flops_per_cycle(int simd, gpuprobe_dtype dtype);
double gp_gpu_flops_per_clock_sm(int cc_major, int cc_minor,
                                 gpuprobe_dtype dtype);

/* ---- the job: what matmul.c asks a backend to do, and what comes back ---- */
typedef struct gp_mm_job {
    /* in: validated parameters */
    const gp_device *dev;
    size_t device_index;
    int64_t m, n, k;
    gpuprobe_dtype dtype;
    int64_t warmup, min_runs, max_runs, budget_ms;
    int transfers, verify;
    uint64_t seed;
    int64_t cpu_threads, verify_samples;

    /* out: filled by the backend */
    double *times;            /* capacity max_runs, owned by matmul.c */
    size_t runs;
    double setup_s, h2d_s, d2h_s;
    int threads;
    char backend[128];
    char math_mode[96];
    char compute_type[64];
    /* out: filled by gp_mm_verify() */
    int verified;             /* 1 pass, 0 fail, -1 not checked */
    double max_error, tolerance;
    double spread;            /* R of gp_matmul_tolerance() */
    int64_t worst_i, worst_j; /* the sample with the largest error */
    double worst_value, worst_ref;
} gp_mm_job;

/* Verify C (m x n, row-major) against a double-precision reference computed
 * from the exact A (m x k) and B (k x n) the device used, on sampled entries
 * (the four corners, then seeded random entries; every entry when
 * verify_samples >= m*n). Fills job->verified, max_error, tolerance, worst_*.
 * Calls the test seam below first. Allocates nothing. */
void gp_mm_verify(gp_mm_job *job, const void *a, gp_elem ea, const void *b,
                  gp_elem eb, void *c, gp_elem ec);

/* Monotonic clock in seconds. */
static inline double gp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Is there host memory for the run? A, B and C, plus what the backend adds
 * (extra_memory touched, extra_space mapped; each NULL text: nothing), are
 * checked against MemAvailable, the cgroup limits, RLIMIT_AS and
 * RLIMIT_DATA (gp_host_fits()). GPUPROBE_ERR_OUT_OF_MEMORY naming the
 * tightest limit, or GPUPROBE_ERR_OVERFLOW. */
gpuprobe_status gp_mm_check_host(gpuprobe_context *ctx, const gp_mm_job *job,
                                 uint64_t extra_memory, const char *memory_text,
                                 uint64_t extra_space, const char *space_text);

/* Bytes of m x n elements of size elem; -1 (and nothing written) on overflow. */
int gp_mm_bytes(int64_t m, int64_t n, size_t elem, size_t *bytes);

/* Backends. Called with validated parameters and a device of the right kind;
 * they fill the job's out fields, call gp_mm_verify() when job->verify, and
 * free everything they allocated before returning, on every path. */
gpuprobe_status gp_cpu_matmul(gpuprobe_context *ctx, gp_mm_job *job);
gpuprobe_status gp_cuda_matmul(gpuprobe_context *ctx, gp_mm_job *job);

/* cuda_matmul.c: frees the per-context cuBLAS handles, streams and events
 * (called from gpuprobe_context_destroy). */
void gp_cuda_blas_release(gpuprobe_context *ctx);

/* Test seam (unit tests only): when set, called on the host copy of C
 * (m x n, row-major, element type ec) just before verification, so tests
 * can prove that a wrong value or a NaN is caught. NULL in normal use. */
extern void (*gp_test_matmul_corrupt)(void *c, gp_elem ec, int64_t m,
                                      int64_t n);

#endif
