/*
 * matmul_internal.h - internal interface of the timed matmul: statistics
 * (stats.c), number formats, inputs and tolerance (numbers.c), the job and
 * the table of operations between the protocol (matmul.c) and its
 * backends (cpu_matmul.c, cuda_matmul.c), and the matmul test seam. Not
 * installed.
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
/* Sorts v in place (ascending). */
void gp_stats_sort(double *v, size_t n);
/* The q-quantile (0 <= q <= 1) of n sorted values, linear between the
 * order statistics around q (n - 1) (numpy's default, R's type 7): q = 0.5
 * is the median. */
double gp_stats_quantile_sorted(const double *v, size_t n, double q);

/* ---- numbers.c: number formats, inputs, sizes, tolerance, peaks ---- */
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

/* count NaNs of element type e into buf (the poisoned output). */
void gp_fill_nan(void *buf, gp_elem e, size_t count);
/* splitmix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator. */
uint64_t gp_splitmix64(uint64_t *state);
/* The generator's starting state for one stream of a seed (A is stream 1,
 * B 2, the verification samples 3). */
uint64_t gp_random_stream(uint64_t seed, uint64_t stream);
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
 * the derivation in numbers.c. */
double gp_matmul_tolerance(gpuprobe_dtype dtype, int64_t k, double spread);

/* Theoretical peaks, FLOP per clock: per core (CPU, by gpuprobe_simd) and
 * per SM (CUDA, by compute capability). 0 when unknown. */
double gp_cpu_flops_per_cycle(int simd, gpuprobe_dtype dtype);
double gp_gpu_flops_per_clock_sm(int cc_major, int cc_minor,
                                 gpuprobe_dtype dtype);

/* ---- the job: the run's parameters and results (matmul.c owns it) ---- */
typedef struct gp_mm_job {
    /* in: validated parameters */
    const gp_device *dev;
    size_t device_index;
    int64_t m, n, k;
    gpuprobe_dtype dtype;
    int64_t warmup, min_runs, max_runs, budget_ms, batch, warmup_ms;
    int transfers, verify;
    uint64_t seed;
    int64_t cpu_threads, verify_samples;
    /* in: A, B (the input element type) and C (fp64 for fp64, else fp32),
     * in bytes: computed once by the protocol, which has checked that
     * they and their sum fit in size_t; backends allocate these. */
    size_t a_bytes, b_bytes, c_bytes;

    /* out: the protocol's (matmul.c) */
    double *times;            /* per-call seconds of each sample */
    size_t times_cap;         /* their capacity (grown without MAX_RUNS) */
    size_t runs;              /* samples timed */
    size_t reps;              /* calls per sample (BATCH) */
    double warmup_s;          /* untimed calls before the samples, added */
    size_t warmup_runs;       /* blocks of the search for the steady state */
    int steady;               /* 1 reached, 0 bound first, -1 no search */
    double setup_s, h2d_s, d2h_s;
    /* out: the backend's, from prepare() */
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
 * Calls the test seam below first. Allocates nothing. (matmul.c) */
void gp_mm_verify(gp_mm_job *job, const void *a, gp_elem ea, const void *b,
                  gp_elem eb, void *c, gp_elem ec);

/* Monotonic clock in seconds. */
static inline double gp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Bytes of m x n elements of size elem; -1 (and nothing written) on overflow. */
int gp_mm_bytes(int64_t m, int64_t n, size_t elem, size_t *bytes);

/* ---- backends: the operations the protocol calls (docs/architecture.md) ----
 *
 * matmul.c runs the protocol; a backend only moves data and runs the gemm.
 * The calls, in order, each on the thread that called gpuprobe_matmul_run():
 *
 *   needs     (may be NULL) host memory and address space the backend adds
 *             to A, B and C, for the protocol's check before anything is
 *             allocated (it may load the backend's library to know).
 *   prepare   load what the run needs, allocate A, B and C and give their
 *             host-side copies in *host (the buffers themselves on the CPU,
 *             pinned buffers on a GPU, with their element types), C on the
 *             device already poisoned (NaN); describe the run (threads,
 *             backend, math_mode, compute_type). On failure it has undone
 *             everything itself; on success release() will be called.
 *   upload    (NULL: the CPU) copy A and B to the device; *seconds is the
 *             copy's time (events).
 *   run       run the gemm `reps` times back to back; *seconds is the time
 *             of the whole block (the CPU's monotonic clock around the
 *             calls; CUDA events around them on the backend's stream).
 *   download  (NULL: the CPU) copy C to host->c; *seconds as upload's.
 *   release   undo prepare, also after a failed upload, run or download
 *             (st is the run's status so far); returns the final status
 *             (st, or the failure of releasing when st was GPUPROBE_OK).
 *
 * Inputs, warm-up, the block size, the timed loop and its stopping rule,
 * statistics and verification belong to the protocol, never to a backend.
 */
typedef struct gp_mm_host {
    void *a, *b, *c;
    gp_elem ea, eb, ec;
} gp_mm_host;

typedef struct gp_mm_needs {
    uint64_t memory;          /* host memory touched beyond A, B and C */
    uint64_t address_space;   /* address space mapped beyond them */
    char memory_text[96];     /* what, for the message ("" nothing) */
    char space_text[160];
} gp_mm_needs;

typedef struct gp_mm_backend {
    gpuprobe_status (*needs)(gpuprobe_context *ctx, const gp_mm_job *job, gp_mm_needs *out);
    gpuprobe_status (*prepare)(gpuprobe_context *ctx, gp_mm_job *job, gp_mm_host *host,
                               void **state);
    gpuprobe_status (*upload)(gpuprobe_context *ctx, void *state, double *seconds);
    gpuprobe_status (*run)(gpuprobe_context *ctx, void *state, size_t reps, double *seconds);
    gpuprobe_status (*download)(gpuprobe_context *ctx, void *state, double *seconds);
    gpuprobe_status (*release)(gpuprobe_context *ctx, void *state, gpuprobe_status st);
} gp_mm_backend;

/* cpu_matmul.c: OpenBLAS fp32/fp64. */
extern const gp_mm_backend gp_cpu_backend;
/* cuda_matmul.c: cuBLAS fp32/tf32/fp16/bf16 (no_cuda_matmul.c without
 * CUDA: every run is GPUPROBE_ERR_CUDA_UNAVAILABLE). */
extern const gp_mm_backend gp_cuda_backend;

/* Test seam (unit tests only): when set, every run uses this table instead
 * of its device's backend, so that tests can script a backend's clock and
 * failures. NULL in normal use. */
extern const gp_mm_backend *gp_test_matmul_backend;

/* Test seam (unit tests only): when set, called on the host copy of C
 * (m x n, row-major, element type ec) just before verification, so tests
 * can prove that a wrong value or a NaN is caught. NULL in normal use. */
extern void (*gp_test_matmul_corrupt)(void *c, gp_elem ec, int64_t m,
                                      int64_t n);

#endif
