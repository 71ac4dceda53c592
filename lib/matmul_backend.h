/*
 * matmul_backend.h - the timed matmul's job and the table of operations
 * between the protocol (matmul.c) and its backends (cpu_matmul.c,
 * cuda_matmul.c, no_cuda_matmul.c), with the protocol's verification and
 * its test seam. Included by those files only (docs/architecture.md,
 * "Headers"); the numbers under the matmul (statistics, number formats,
 * inputs, tolerance, peaks, gp_now) are floor-1 helpers in internal.h.
 * Not installed.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_MATMUL_BACKEND_H
#define GPUPROBE_MATMUL_BACKEND_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

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
    double cpu_flops_per_cycle; /* the CPU's peak per core and cycle, when the
                                   backend's kernel sets it (0: by the SIMD) */
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
