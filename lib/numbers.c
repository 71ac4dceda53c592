/*
 * numbers.c - the arithmetic under the timed matmul, shared by the
 * protocol and both backends: fp16/bf16 conversions, element access, the
 * seeded random inputs, buffer sizes, the verification tolerance (with its
 * derivation) and the theoretical peaks. Ground floor: pure functions,
 * calling nothing of the library. See docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Number formats                                                           */
/* ------------------------------------------------------------------------ */

static uint32_t f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static float bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Round the integer `value` right by `shift` bits (1..31), to nearest, ties
 * to even. */
static uint32_t shift_rne(uint32_t value, unsigned shift)
{
    uint32_t kept = value >> shift;
    uint32_t rem = value & ((UINT32_C(1) << shift) - 1);
    uint32_t half = UINT32_C(1) << (shift - 1);
    if (rem > half || (rem == half && (kept & 1)))
        kept++;
    return kept;
}

uint16_t gp_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t exp = (x >> 23) & 0xff;
    uint32_t man = x & 0x7fffff;

    if (exp == 0xff) /* inf, or NaN kept quiet with the top payload bits */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15; /* biased binary16 exponent */
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00); /* >= 2^16: overflows to inf */
    if (e <= 0) {
        /* binary16 subnormal (or zero): units of 2^-24. The fp32 value is
         * (man | 2^23) * 2^(exp - 150), so shift by 126 - exp = 14 - e.
         * Below 2^-25 (shift > 24) everything rounds to zero; an fp32
         * subnormal is far below that too. */
        if (e < -10 || exp == 0)
            return sign;
        uint32_t h = shift_rne(man | 0x800000, (unsigned)(14 - e));
        return (uint16_t)(sign | h); /* a carry gives the smallest normal */
    }
    /* Normal: keep 10 of 23 mantissa bits; a carry out of the mantissa
     * bumps the exponent, up to 0x7c00 (inf) from the largest values. */
    uint32_t h = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

float gp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0) {
        float v = (float)man * 0x1p-24f; /* zero or subnormal: exact */
        return sign ? -v : v;
    }
    if (exp == 31)
        return bits_f32(sign | 0x7f800000 | (man << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t gp_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffff) > 0x7f800000) /* NaN: keep it quiet */
        return (uint16_t)((x >> 16) | 0x40);
    /* Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to
     * even; a carry propagates into the exponent (to inf at the top). */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float gp_bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

size_t gp_elem_size(gp_elem e)
{
    switch (e) {
    case GP_ELEM_F64: return 8;
    case GP_ELEM_F32: return 4;
    case GP_ELEM_F16:
    case GP_ELEM_BF16: return 2;
    }
    return 0;
}

double gp_elem_get(const void *buf, gp_elem e, size_t idx)
{
    switch (e) {
    case GP_ELEM_F32: return ((const float *)buf)[idx];
    case GP_ELEM_F64: return ((const double *)buf)[idx];
    case GP_ELEM_F16: return gp_f16_to_f32(((const uint16_t *)buf)[idx]);
    case GP_ELEM_BF16: return gp_bf16_to_f32(((const uint16_t *)buf)[idx]);
    }
    return NAN;
}

void gp_elem_set(void *buf, gp_elem e, size_t idx, double v)
{
    switch (e) {
    case GP_ELEM_F32: ((float *)buf)[idx] = (float)v; break;
    case GP_ELEM_F64: ((double *)buf)[idx] = v; break;
    case GP_ELEM_F16: ((uint16_t *)buf)[idx] = gp_f32_to_f16((float)v); break;
    case GP_ELEM_BF16: ((uint16_t *)buf)[idx] = gp_f32_to_bf16((float)v); break;
    }
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */
/* ------------------------------------------------------------------------ */

void gp_fill_nan(void *buf, gp_elem e, size_t count)
{
    switch (e) {
    case GP_ELEM_F64: {
        double *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = NAN;
        break;
    }
    case GP_ELEM_F32: {
        float *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = NAN;
        break;
    }
    case GP_ELEM_F16:
    case GP_ELEM_BF16: {
        uint16_t *p = buf; /* a quiet NaN in either format */
        for (size_t i = 0; i < count; i++)
            p[i] = e == GP_ELEM_F16 ? 0x7e00 : 0x7fc0;
        break;
    }
    }
}

uint64_t gp_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t gp_random_stream(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream * UINT64_C(0xD1B54A32D192ED03));
    (void)gp_splitmix64(&s);
    return s;
}

/* (2u + 1 - 2^23) / 2^23 for a 23-bit u: an odd multiple of 2^-23 in
 * (-1, 1), exact in fp32 (|numerator| < 2^23), never 0, symmetric about 0. */
static float uniform_f32(uint64_t r)
{
    int32_t u = (int32_t)(r >> 41);               /* 23 bits */
    return (float)(2 * u + 1 - (1 << 23)) * 0x1p-23f;
}

/* The same with a 52-bit u for fp64: an odd multiple of 2^-52 in (-1, 1). */
static double uniform_f64(uint64_t r)
{
    int64_t u = (int64_t)(r >> 12);               /* 52 bits */
    return (double)(2 * u + 1 - (INT64_C(1) << 52)) * 0x1p-52;
}

void gp_fill_random(void *buf, gp_elem e, size_t count, uint64_t seed,
                    uint64_t stream)
{
    uint64_t s = gp_random_stream(seed, stream);
    switch (e) {
    case GP_ELEM_F32: {
        float *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = uniform_f32(gp_splitmix64(&s));
        break;
    }
    case GP_ELEM_F64: {
        double *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = uniform_f64(gp_splitmix64(&s));
        break;
    }
    case GP_ELEM_F16: {
        uint16_t *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = gp_f32_to_f16(uniform_f32(gp_splitmix64(&s)));
        break;
    }
    case GP_ELEM_BF16: {
        uint16_t *p = buf;
        for (size_t i = 0; i < count; i++)
            p[i] = gp_f32_to_bf16(uniform_f32(gp_splitmix64(&s)));
        break;
    }
    }
}

/* ------------------------------------------------------------------------ */
/* Tolerance                                                                */
/* ------------------------------------------------------------------------ */

/*
 * The error of an entry is held relative to s = sum_k |a_ik||b_kj|, the
 * natural scale of a dot product's rounding error (Higham, "Accuracy and
 * Stability of Numerical Algorithms", 2nd ed., sec. 3.1). Two sources:
 *
 * 1. Rounding of the inputs by the device (tf32 only: cuBLAS feeds fp32
 *    values to TF32 tensor cores, which keep 10 mantissa bits, possibly by
 *    truncation, so each factor is off by up to 2^-10 relative). Then
 *    |sum a b (d_a + d_b + d_a d_b)| <= (2 * 2^-10 + 2^-20) * s, rigorously,
 *    whatever k. fp16 and bf16 inputs are rounded on the host before upload
 *    and the reference uses the rounded values, so this term is 0 for them;
 *    fp32 and fp64 inputs are exact.
 *
 * 2. Rounding in the accumulation, unit roundoff u of the accumulator.
 *
 *    IEEE accumulation (fp32 and fp64, on the CPU and on CUDA cores): the
 *    sum's error is sum_j d_j S_j to first order, S_j the partial sums and
 *    |d_j| <= u, plus at most u s for the products (without FMA) and u |c|
 *    <= u s for storing the result. The worst case, gamma_k s, is about
 *    k u s. Taking the d_j as independent and zero-mean (Higham & Mary,
 *    SIAM J. Sci. Comput. 41(5), 2019), Hoeffding's inequality bounds the
 *    sum by lambda u sqrt(sum_j S_j^2) except with probability
 *    2 exp(-lambda^2 / 2) (2.5e-14 for lambda = 8). So, with the spread
 *        R = sqrt(sum_j S_j^2) / s
 *    taken from the data (the partial sums of the sequential order, which
 *    the reference computes anyway; blocked and split orders have smaller
 *    ones for zero-mean inputs), the tolerance is
 *        u * (2 + min(k, 8 R)),
 *    R the largest over the sampled entries. For our zero-mean inputs R is
 *    ~1 (0.2 to 3 over 256 samples) whatever k, since partial sums grow
 *    like sqrt(k) and s like k: the bound is ~20 u at any depth, 8x to
 *    100x the errors OpenBLAS's sgemm shows (0.13 u to 2.2 u, measured at
 *    k = 100 to 10^6). It tells fp32 from fp32 silently computed in TF32,
 *    whose inputs lose 13 bits (an error ~2^-11 / sqrt(k) per entry):
 *    caught up to k of about 300,000 when TF32 rounds to nearest and about
 *    1,000,000 when it truncates (measured, m = n = 16, 256 samples); the
 *    bound without the data, u (8 + sqrt(k)), lost it from k = 30,000.
 *    Beyond that reach fp32 is still held to its own bound, but TF32 would
 *    pass. A layout or transposition bug gives errors ~2 / sqrt(k) (0.03
 *    at k = 5000), far above.
 *
 *    Tensor-core accumulation (tf32, fp16, bf16): tensor cores align
 *    addends and truncate with few guard bits (Fasi, Higham, Mikaitis &
 *    Pranesh, PeerJ CS 7:e330, 2021) and cuBLAS may split k, so no such
 *    model holds; we use u (8 + sqrt(k)) with u = 2^-20: the constant
 *    covers the worst case for short sums (k <= 8), sqrt(k) is the
 *    probabilistic bound with lambda = 1. Computing fp16 in fp16 instead
 *    (u = 2^-11) would exceed the bound at the default sizes.
 *
 *    u: fp64 2 * 2^-53 (the device and the reference each round); fp32
 *    2^-24.
 *
 * The common rule of thumb "bf16 ~2^-8" is the error against the
 * *unrounded* inputs; here the reference uses the rounded inputs, which isolates the
 * computation. At k = 5000 a 2^-8-based bound (0.3) would let a
 * transposition bug pass.
 *
 * NaN never passes: the comparison is written !(err <= tol).
 */
double gp_matmul_tolerance(gpuprobe_dtype dtype, int64_t k, double spread)
{
    double kk = (double)(k > 0 ? k : 1);
    switch (dtype) {
    case GPUPROBE_DTYPE_FP64:
    case GPUPROBE_DTYPE_FP32: {
        double u = dtype == GPUPROBE_DTYPE_FP64 ? 0x1p-52 : 0x1p-24;
        double p = 8.0 * (spread > 0 ? spread : 0.0);
        return u * (2.0 + (p < kk ? p : kk));
    }
    case GPUPROBE_DTYPE_TF32:
        return 2 * 0x1p-10 + 0x1p-20 + 0x1p-20 * (8.0 + sqrt(kk));
    case GPUPROBE_DTYPE_FP16:
    case GPUPROBE_DTYPE_BF16:
        return 0x1p-20 * (8.0 + sqrt(kk));
    default:
        return 0.0;
    }
}

/* ------------------------------------------------------------------------ */
/* Peaks                                                                    */
/* ------------------------------------------------------------------------ */

/* FLOP per clock per core: vector lanes x 2 (FMA) x FMA ports, assuming
 * two FMA units (one-unit AVX-512 parts reach half). AVX without FMA: one
 * add and one multiply of 8 (fp32) lanes per clock. */
double gp_cpu_flops_per_cycle(int simd, gpuprobe_dtype dtype)
{
    int dp = dtype == GPUPROBE_DTYPE_FP64;
    if (dtype != GPUPROBE_DTYPE_FP32 && !dp)
        return 0.0;
    switch (simd) {
    case GPUPROBE_SIMD_AVX512: return dp ? 32 : 64;
    case GPUPROBE_SIMD_AVX2_FMA: return dp ? 16 : 32;
    case GPUPROBE_SIMD_AVX: return dp ? 8 : 16;
    case GPUPROBE_SIMD_SSE4_2: return dp ? 4 : 8;
    default: return 0.0;
    }
}

/*
 * Dense FLOP per clock per SM, by compute capability. fp32 is 2 x the FP32
 * cores per SM (CUDA C++ Programming Guide, "Arithmetic Instructions"
 * table); tensor-core rates are the whitepapers' dense peak TFLOPS divided
 * by SMs x boost clock:
 *  7.0 V100: NVIDIA Tesla V100 GPU Architecture whitepaper (2017): 125 TF
 *      fp16 tensor / (80 SMs x 1.53 GHz) = 1024; no tf32/bf16.
 *  7.5 T4:   NVIDIA Turing GPU Architecture whitepaper (2018): 64 fp16 FMA
 *      per tensor core per clock x 8 = 1024 (GeForce parts: half with fp32
 *      accumulate); no tf32/bf16.
 *  8.0 A100: NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020):
 *      156 TF tf32, 312 TF fp16/bf16 / (108 x 1.41 GHz) = 1024 / 2048.
 *  8.6 GA10x: NVIDIA Ampere GA102 GPU Architecture whitepaper (2020) and
 *      the A40 datasheet: 37.4 TF fp32, 74.8 TF tf32, 149.7 TF fp16/bf16 /
 *      (84 x 1.74 GHz) = 256 / 512 / 1024 (GeForce: half with fp32 acc).
 *  8.9 AD10x: NVIDIA Ada GPU Architecture whitepaper (2022), L40S
 *      datasheet: 91.6 TF fp32, 183 TF tf32, 362 TF fp16 / (142 x 2.52 GHz)
 *      = 256 / 512 / 1024 (GeForce: half with fp32 accumulate).
 *  9.0 H100: NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022):
 *      SXM5 67 TF fp32, 495 TF tf32, 989 TF fp16/bf16 / (132 x 1.98 GHz)
 *      = 256 / 2048 / 4096 (H200: same SM).
 * 10.0 B200: NVIDIA Blackwell Architecture Technical Brief (2024), DGX B200
 *      datasheet: 2.25 PF dense fp16/bf16, 1.1 PF tf32 per GPU, 148 SMs at
 *      ~1.9 GHz = 8192 / 4096; fp32 128 cores per SM = 256.
 * 12.0 GB20x: NVIDIA RTX Blackwell GPU Architecture whitepaper (2025):
 *      fp32 256; tensor fp16/bf16 1024, tf32 512 (professional parts;
 *      GeForce: half with fp32 accumulate).
 * The figures are upper bounds: GeForce parts, lower sustained clocks and
 * power limits give less. Unknown CC: 0.
 */
double gp_gpu_flops_per_clock_sm(int cc_major, int cc_minor,
                                 gpuprobe_dtype dtype)
{
    static const struct {
        int major, minor;
        double fp32, tf32, fp16, bf16;
    } table[] = {
        {7, 0, 128, 0, 1024, 0},
        {7, 5, 128, 0, 1024, 0},
        {8, 0, 128, 1024, 2048, 2048},
        {8, 6, 256, 512, 1024, 1024},
        {8, 9, 256, 512, 1024, 1024},
        {9, 0, 256, 2048, 4096, 4096},
        {10, 0, 256, 4096, 8192, 8192},
        {12, 0, 256, 512, 1024, 1024},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].major != cc_major || table[i].minor != cc_minor)
            continue;
        switch (dtype) {
        case GPUPROBE_DTYPE_FP32: return table[i].fp32;
        case GPUPROBE_DTYPE_TF32: return table[i].tf32;
        case GPUPROBE_DTYPE_FP16: return table[i].fp16;
        case GPUPROBE_DTYPE_BF16: return table[i].bf16;
        default: return 0.0;
        }
    }
    return 0.0;
}

/* ------------------------------------------------------------------------ */
/* Helpers for the backends                                                 */
/* ------------------------------------------------------------------------ */

int gp_mm_bytes(int64_t m, int64_t n, size_t elem, size_t *bytes)
{
    if (m <= 0 || n <= 0 || elem == 0)
        return -1;
    size_t um = (size_t)m, un = (size_t)n;
    if ((uint64_t)m > SIZE_MAX || (uint64_t)n > SIZE_MAX)
        return -1;
    if (un > SIZE_MAX / um)
        return -1;
    size_t count = um * un;
    if (count > SIZE_MAX / elem)
        return -1;
    *bytes = count * elem;
    return 0;
}

