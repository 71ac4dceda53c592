/*
 * bandwidth_internal.h - internal interface of the bandwidth measurement,
 * by floor: its numbers (bw_numbers.c), the host's CPUs, caches and memory
 * modules (host_cpu.c), the job and the table of operations between the
 * protocol (bandwidth.c) and its backends (cpu_bandwidth.c,
 * cuda_bandwidth.c or no_cuda_bandwidth.c). Not installed.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_BANDWIDTH_INTERNAL_H
#define GPUPROBE_BANDWIDTH_INTERNAL_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* ==== Floor 1: bw_numbers.c ============================================= */

/* The smallest buffer a run takes, and the step automatic sizes are made
 * of (a huge page). */
#define GP_BW_MIN_BYTES ((uint64_t)4096)
#define GP_BW_SIZE_STEP ((uint64_t)2 << 20)
/* The CPU's automatic arrays: at least this large, and this large when the
 * last-level cache is unknown. */
#define GP_BW_CPU_MIN_BYTES ((uint64_t)64 << 20)
#define GP_BW_CPU_UNKNOWN_BYTES ((uint64_t)256 << 20)

/* The kernels, over doubles, compiled for one instruction set: the sum of
 * a[0..n); the same sum read as `streams` runs side by side (1 to 16);
 * c = a; b = a + s c. */
typedef struct gp_bw_kernels {
    const char *isa;           /* "AVX-512", "AVX2", "SSE2", "compiler default" */
    double (*sum)(const double *a, size_t n);
    double (*sum_streams)(const double *a, size_t n, unsigned streams);
    void (*copy)(double *restrict c, const double *restrict a, size_t n);
    void (*triad)(double *restrict b, const double *restrict a, const double *restrict c,
                  double s, size_t n);
} gp_bw_kernels;
/* The sets this CPU runs, the widest first (*sets); how many (1 to
 * GP_BW_MAX_SETS). */
#define GP_BW_MAX_SETS 3
size_t gp_bw_kernel_sets(const gp_bw_kernels **sets);

/* Bytes counted for one pass of a test (docs/bandwidth.md): STREAM's
 * convention, no write-allocate; the read reads read_buffers buffers. */
double gp_bw_pass_bytes(int test, uint64_t buffer_bytes, unsigned read_buffers);

/* GB/s (10^9 B/s), one direction, after line encoding, of one PCIe lane
 * of generation gen (0 unknown), and of a link of width lanes. */
double gp_bw_pcie_lane_gbps(int gen);
double gp_bw_pcie_gbps(int gen, int width);
/* A GPU's memory: bus width x memory clock (MHz) x 2; 0 unknown. */
double gp_bw_gpu_memory_gbps(int64_t bus_bits, int64_t clock_mhz);
/* One memory module: data width x speed (MT/s); 0 unknown. */
double gp_bw_dimm_gbps(int64_t width_bits, int64_t mts);
/* What the size rule asks of each buffer: CUDA max(1 GiB, 8 x L2); CPU
 * max(64 MiB, 4 x the last-level caches), 256 MiB when they are unknown
 * (cache_bytes 0). */
uint64_t gp_bw_target_bytes(int cuda, uint64_t cache_bytes);
/* target rounded up to GP_BW_SIZE_STEP when that fits under limit; else
 * the most of limit in steps (in GP_BW_MIN_BYTES below one step); 0 when
 * not even that fits. */
uint64_t gp_bw_fit_bytes(uint64_t target, uint64_t limit);

/* ==== Floor 2: host_cpu.c =============================================== */

/* A sysfs CPU list ("0-3,8,10-11\n") into a bit set of nbits bits
 * (cleared first). 0, or -1 when malformed or naming a CPU >= nbits. */
int gp_parse_cpu_list(const char *text, unsigned char *set, size_t nbits);
/* A sysfs cache size ("107520K", "2048K", "32M"). 0 or -1. */
int gp_parse_cache_size(const char *text, uint64_t *bytes);

/* One SMBIOS memory device (DMI type 17). */
typedef struct gp_dmi_module {
    int present;         /* a module is installed */
    int width_bits;      /* data width; 0 unknown */
    int64_t mts;         /* configured speed, else rated speed (MT/s); 0 unknown */
} gp_dmi_module;
/* Parse the raw entry (/sys/firmware/dmi/entries/17-N/raw) of len bytes.
 * 0, or -1 when it is not a memory device entry. */
int gp_parse_dmi_memory_device(const unsigned char *raw, size_t len, gp_dmi_module *out);

/* The allowed CPUs (bit set of nbits) in the order threads go to them: the
 * lowest allowed CPU of each core (thread_siblings_list) first, then the
 * others, each group ascending; at most cap into out. Returns how many;
 * *cores is the size of the first group. */
size_t gp_host_cpu_order(const char *sysroot, const unsigned char *allowed, size_t nbits,
                         int *out, size_t cap, size_t *cores);
/* The last-level caches of the CPUs given, each shared cache counted
 * once. 0, or -1 when none could be read. */
int gp_host_llc_bytes(const char *sysroot, const int *cpus, size_t n, uint64_t *bytes);

/* The memory modules of the DMI tables and their theoretical rate. */
typedef struct gp_dmi_memory {
    double gbps;         /* sum over the modules; 0 when any is unknown */
    int modules, unknown;
    int width_bits;
    int64_t mts_min, mts_max;
    char why[192];       /* where the rate comes from, or why there is none */
} gp_dmi_memory;
void gp_host_dmi_memory(const char *sysroot, gp_dmi_memory *out);

/* ==== Floor 5: the backends ============================================= */

/* The most timed passes of a test. */
#define GP_BW_MAX_RUNS 1000
/* A pass shorter than this in the warm-up is repeated back to back. */
#define GP_BW_PASS_S 0.005
/* The most repetitions of one pass. */
#define GP_BW_MAX_REPS ((size_t)1 << 16)

/* Repetitions of a pass whose one repetition took `seconds`: as many as
 * make it last 1.25 x GP_BW_PASS_S when it was shorter than GP_BW_PASS_S
 * (at most GP_BW_MAX_REPS), else 1 (bw_numbers.c). */
size_t gp_bw_reps_for(double seconds);

#define GP_BW_BIT(t) (1u << (unsigned)(t))
/* The tests each kind of device has. */
#define GP_BW_CPU_TESTS                                                       \
    (GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_READ) | GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_COPY) | \
     GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_TRIAD) | GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_READ_STREAMS))
#define GP_BW_CUDA_TESTS                                                      \
    (GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_READ) | GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_COPY) | \
     GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_H2D_PINNED) |                          \
     GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE) |                        \
     GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_D2H_PINNED) |                          \
     GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE))

/* The run: its parameters and what the backend found. */
typedef struct gp_bw_job {
    /* in: validated parameters */
    const gp_device *dev;
    size_t device_index;
    uint64_t asked_bytes;      /* GPUPROBE_BANDWIDTH_BUFFER_BYTES, 0 automatic */
    int64_t runs, warmup, cpu_threads;
    int pin;
    unsigned tests;            /* bits of the tests to run */
    /* from open() */
    uint64_t cache_bytes;      /* CPU: the last-level caches; CUDA: L2; 0 unknown */
    uint64_t device_room;      /* CUDA: device bytes the buffers may take; else UINT64_MAX */
    int host_buffers;          /* host buffers of buffer_bytes prepare() allocates */
    uint64_t extra_space;      /* address space it maps beyond them (thread stacks) */
    int device_buffers;        /* device buffers of buffer_bytes */
    int threads, pinned;       /* CPU threads; of them pinned (after prepare()) */
    double memory_peak_gbps;   /* 0 unknown */
    char peak_source[192];
    char method[512];
    /* from the protocol, before prepare() */
    uint64_t buffer_bytes, target_bytes;
    /* CUDA, after finish(): the PCIe link, -1 unknown */
    int pcie_gen, pcie_width, pcie_max_gen, pcie_max_width;
} gp_bw_job;

/*
 * The operations the protocol (bandwidth.c) calls, in order, on the
 * thread that called gpuprobe_bandwidth_run():
 *
 *   open      load what the run needs and describe the device: cache,
 *             device room, buffers, threads, the memory peak, the method.
 *             On failure it has undone everything itself; on success
 *             release() will be called.
 *   prepare   allocate and fill job->buffer_bytes buffers (the CPU's
 *             threads start here and write their own parts).
 *   pass      run test t reps times back to back; *seconds is the time of
 *             the whole block.
 *   finish    check the data after the passes; the link readings.
 *   release   undo open and prepare, also after a failure (st is the
 *             run's status so far); returns the final status.
 *
 * Sizes, warm-up, repetitions, the order of the passes and statistics are
 * the protocol's.
 */
typedef struct gp_bw_backend {
    unsigned tests;            /* the tests it has (GP_BW_BIT) */
    unsigned read_buffers;     /* buffers the read test reads: its bytes */
    gpuprobe_status (*open)(gpuprobe_context *ctx, gp_bw_job *job, void **state);
    gpuprobe_status (*prepare)(gpuprobe_context *ctx, void *state, gp_bw_job *job);
    gpuprobe_status (*pass)(gpuprobe_context *ctx, void *state, gpuprobe_bandwidth_test t,
                            size_t reps, double *seconds);
    gpuprobe_status (*finish)(gpuprobe_context *ctx, void *state, gp_bw_job *job);
    gpuprobe_status (*release)(gpuprobe_context *ctx, void *state, gpuprobe_status st);
} gp_bw_backend;

/* Test seam (unit tests only): when set, the CPU backend calls it on its
 * three arrays (n doubles each) after the passes, before it checks them,
 * so a test can prove that a wrong element is caught. NULL in normal use. */
extern void (*gp_test_bw_corrupt)(double *a, double *b, double *c, size_t n);

/* cpu_bandwidth.c: read, copy, triad on the host's memory. */
extern const gp_bw_backend gp_cpu_bw_backend;
/* cuda_bandwidth.c: read, copy and the four host transfers on a CUDA
 * device (no_cuda_bandwidth.c without CUDA: every run is
 * GPUPROBE_ERR_CUDA_UNAVAILABLE). */
extern const gp_bw_backend gp_cuda_bw_backend;

#endif
