/*
 * bw_numbers.c - the numbers under the bandwidth measurement: the CPU
 * kernels (read, copy, triad over doubles), the theoretical rates of
 * memory and PCIe links, and the buffer-size rule. Ground floor: pure,
 * nothing here calls the library.
 *
 * The kernels are plain C loops the compiler vectorises (CMake builds this
 * file with -O3, and without -ftree-loop-distribute-patterns so that the
 * copy stays a loop of loads and stores instead of becoming a call to
 * memcpy, whose large copies use non-temporal stores: another
 * measurement). On x86-64 each is compiled three times, for AVX-512, AVX2
 * and the baseline (SSE2), and gp_bw_kernel_sets() lists those this CPU
 * runs: the widest is not always the fastest at streaming from memory
 * (on AMD Zen 4 the SSE2 read is about 16% faster than the AVX-512 one),
 * so the CPU backend times them and keeps the fastest per test.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "bandwidth_internal.h"

#include <math.h>

/* Independent partial sums in the read kernel: enough vectors in flight
 * that the additions' latency never limits a core (four 8-wide, eight
 * 4-wide or sixteen 2-wide accumulators). */
#define GP_BW_LANES 32
/* Elements of one run read in turn before the next run's: one 64-byte
 * line of doubles, so each run stays a sequential stream the hardware
 * prefetchers follow. */
#define GP_BW_STEP 8
#define GP_BW_MAX_STREAMS 16

/* The four kernels, compiled with attribute ATTR under names ending in
 * SUFFIX. sum_streams: runs of `len` elements (whole lines) side by side;
 * what the runs leave at the end (fewer than streams lines and a part of
 * one) is read as one stream. */
#define GP_BW_KERNELS(SUFFIX, ATTR)                                           \
    ATTR static double sum_##SUFFIX(const double *a, size_t n)                \
    {                                                                         \
        double s[GP_BW_LANES] = {0};                                          \
        size_t i = 0;                                                         \
        for (; i + GP_BW_LANES <= n; i += GP_BW_LANES)                        \
            for (size_t k = 0; k < GP_BW_LANES; k++)                          \
                s[k] += a[i + k];                                             \
        double t = 0.0;                                                       \
        for (; i < n; i++)                                                    \
            t += a[i];                                                        \
        for (size_t k = 0; k < GP_BW_LANES; k++)                              \
            t += s[k];                                                        \
        return t;                                                             \
    }                                                                         \
    ATTR static double sum_streams_##SUFFIX(const double *a, size_t n,        \
                                            unsigned streams)                 \
    {                                                                         \
        if (streams < 1)                                                      \
            streams = 1;                                                      \
        if (streams > GP_BW_MAX_STREAMS)                                      \
            streams = GP_BW_MAX_STREAMS;                                      \
        size_t len = n / streams / GP_BW_STEP * GP_BW_STEP;                   \
        double s[GP_BW_MAX_STREAMS][GP_BW_STEP] = {{0}};                      \
        for (size_t i = 0; i < len; i += GP_BW_STEP)                          \
            for (unsigned r = 0; r < streams; r++)                            \
                for (size_t k = 0; k < GP_BW_STEP; k++)                       \
                    s[r][k] += a[(size_t)r * len + i + k];                    \
        double t = sum_##SUFFIX(a + (size_t)streams * len,                    \
                                n - (size_t)streams * len);                   \
        for (unsigned r = 0; r < streams; r++)                                \
            for (size_t k = 0; k < GP_BW_STEP; k++)                           \
                t += s[r][k];                                                 \
        return t;                                                             \
    }                                                                         \
    ATTR static void copy_##SUFFIX(double *restrict c, const double *restrict a, \
                                   size_t n)                                  \
    {                                                                         \
        for (size_t i = 0; i < n; i++)                                        \
            c[i] = a[i];                                                      \
    }                                                                         \
    ATTR static void triad_##SUFFIX(double *restrict b, const double *restrict a, \
                                    const double *restrict c, double s, size_t n) \
    {                                                                         \
        for (size_t i = 0; i < n; i++)                                        \
            b[i] = a[i] + s * c[i];                                           \
    }

#define GP_BW_SET(SUFFIX, NAME)                                               \
    { NAME, sum_##SUFFIX, sum_streams_##SUFFIX, copy_##SUFFIX, triad_##SUFFIX }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
GP_BW_KERNELS(avx512, __attribute__((target("avx512f"))))
GP_BW_KERNELS(avx2, __attribute__((target("avx2"))))
GP_BW_KERNELS(base, )

size_t gp_bw_kernel_sets(const gp_bw_kernels **sets)
{
    static const gp_bw_kernels all[] = {
        GP_BW_SET(avx512, "AVX-512"), GP_BW_SET(avx2, "AVX2"), GP_BW_SET(base, "SSE2"),
    };
    /* The widest this CPU runs first: a suffix of the table. */
    __builtin_cpu_init();
    size_t first = __builtin_cpu_supports("avx512f") ? 0 : __builtin_cpu_supports("avx2") ? 1 : 2;
    *sets = all + first;
    return sizeof all / sizeof all[0] - first;
}
#else
GP_BW_KERNELS(base, )

size_t gp_bw_kernel_sets(const gp_bw_kernels **sets)
{
    static const gp_bw_kernels all[] = {GP_BW_SET(base, "compiler default")};
    *sets = all;
    return 1;
}
#endif

size_t gp_bw_reps_for(double seconds)
{
    if (seconds >= GP_BW_PASS_S)
        return 1;
    if (seconds > 0 && 1.25 * GP_BW_PASS_S / seconds < (double)GP_BW_MAX_REPS)
        return (size_t)ceil(1.25 * GP_BW_PASS_S / seconds);
    return GP_BW_MAX_REPS;
}

double gp_bw_pass_bytes(int test, uint64_t buffer_bytes, unsigned read_buffers)
{
    double b = (double)buffer_bytes;
    switch (test) {
    case GPUPROBE_BANDWIDTH_TEST_READ: return b * (double)read_buffers;
    case GPUPROBE_BANDWIDTH_TEST_COPY: return 2.0 * b;
    case GPUPROBE_BANDWIDTH_TEST_TRIAD: return 3.0 * b;
    default: return b;
    }
}

double gp_bw_pcie_lane_gbps(int gen)
{
    /* GT/s per lane and line encoding: 8b/10b to 2.0, 128b/130b from 3.0,
     * none from 6.0 (PAM4 flits; their CRC and FEC bytes not counted). */
    switch (gen) {
    case 1: return 2.5 * 8.0 / 10.0 / 8.0;
    case 2: return 5.0 * 8.0 / 10.0 / 8.0;
    case 3: return 8.0 * 128.0 / 130.0 / 8.0;
    case 4: return 16.0 * 128.0 / 130.0 / 8.0;
    case 5: return 32.0 * 128.0 / 130.0 / 8.0;
    case 6: return 64.0 / 8.0;
    case 7: return 128.0 / 8.0;
    default: return 0.0;
    }
}

double gp_bw_pcie_gbps(int gen, int width)
{
    if (width <= 0 || width > 32)
        return 0.0;
    return gp_bw_pcie_lane_gbps(gen) * (double)width;
}

double gp_bw_gpu_memory_gbps(int64_t bus_bits, int64_t clock_mhz)
{
    if (bus_bits <= 0 || clock_mhz <= 0)
        return 0.0;
    /* Two transfers per clock of the memory clock NVML and CUDA report. */
    return (double)bus_bits / 8.0 * (double)clock_mhz * 2.0 / 1e3;
}

double gp_bw_dimm_gbps(int64_t width_bits, int64_t mts)
{
    if (width_bits <= 0 || mts <= 0)
        return 0.0;
    return (double)width_bits / 8.0 * (double)mts / 1e3;
}

uint64_t gp_bw_target_bytes(int cuda, uint64_t cache_bytes)
{
    uint64_t t;
    if (cuda) {
        t = (uint64_t)1 << 30;
        if (cache_bytes <= (UINT64_MAX >> 3) && 8 * cache_bytes > t)
            t = 8 * cache_bytes;
    } else if (cache_bytes == 0) {
        t = GP_BW_CPU_UNKNOWN_BYTES;
    } else {
        t = GP_BW_CPU_MIN_BYTES;
        if (cache_bytes <= (UINT64_MAX >> 2) && 4 * cache_bytes > t)
            t = 4 * cache_bytes;
    }
    return t;
}

uint64_t gp_bw_fit_bytes(uint64_t target, uint64_t limit)
{
    const uint64_t step = GP_BW_SIZE_STEP;
    if (target <= UINT64_MAX - (step - 1))
        target = (target + step - 1) / step * step;
    if (target <= limit)
        return target;
    if (limit >= step)
        return limit / step * step;
    return limit / GP_BW_MIN_BYTES * GP_BW_MIN_BYTES;
}
