/*
 * matmul.c - the timed matmul: options, results, the protocol shared by the
 * backends (input generation, verification, statistics, peaks) and
 * gpuprobe_matmul_run().
 *
 * The protocol (see docs and DESIGN.md, "Timed matmul protocol"):
 *   1. setup, timed apart: buffers, seeded zero-mean inputs, C poisoned with
 *      NaN, handles/streams, library loading, and the warm-up runs (which
 *      absorb first-call kernel loading);
 *   2. host-to-device copies (CUDA), timed apart with events;
 *   3. timed runs: at least MIN_RUNS, more while BUDGET_MS lasts, at most
 *      MAX_RUNS; a monotonic clock around the bare gemm call on the CPU,
 *      CUDA events on the library's own stream on a GPU;
 *   4. device-to-host copy of C (CUDA), timed apart;
 *   5. verification of sampled entries against a host reference.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "matmul_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void (*gp_test_matmul_corrupt)(void *c, gp_elem ec, int64_t m, int64_t n);

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

#define GP_MM_NPARAMS 13

struct gpuprobe_matmul_options {
    int64_t value[GP_MM_NPARAMS];
    unsigned set;           /* bit p: param p was set explicitly */
};

static const struct {
    int64_t lower, upper, def;
} param_info[GP_MM_NPARAMS] = {
    /* M, N, K: cblas and cuBLAS take int dimensions and leading dimensions. */
    [GPUPROBE_MATMUL_M] = {1, INT32_MAX, 5000},
    [GPUPROBE_MATMUL_N] = {1, INT32_MAX, 5000},
    [GPUPROBE_MATMUL_K] = {1, INT32_MAX, 5000},
    /* fp32, fp64, tf32, fp16, bf16; fp8/int8/int4 are capacity-only. */
    [GPUPROBE_MATMUL_DTYPE] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_BF16,
                               GPUPROBE_DTYPE_FP32},
    [GPUPROBE_MATMUL_WARMUP] = {0, 1000, 1},
    [GPUPROBE_MATMUL_MIN_RUNS] = {1, 10000, 5},
    [GPUPROBE_MATMUL_MAX_RUNS] = {1, 10000, 100},
    [GPUPROBE_MATMUL_BUDGET_MS] = {0, 3600000, 0},
    [GPUPROBE_MATMUL_TRANSFERS] = {0, 1, 1},
    [GPUPROBE_MATMUL_VERIFY] = {0, 1, 1},
    [GPUPROBE_MATMUL_SEED] = {0, INT64_MAX, 42},
    [GPUPROBE_MATMUL_CPU_THREADS] = {0, 1024, 0},
    [GPUPROBE_MATMUL_VERIFY_SAMPLES] = {1, 1 << 20, 256},
};

static int param_known(gpuprobe_matmul_param p)
{
    return (unsigned)p < GP_MM_NPARAMS;
}

static void options_init(gpuprobe_matmul_options *o)
{
    for (int p = 0; p < GP_MM_NPARAMS; p++)
        o->value[p] = param_info[p].def;
    o->set = 0;
}

gpuprobe_status gpuprobe_matmul_options_create(gpuprobe_matmul_options **out)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gpuprobe_matmul_options *o = malloc(sizeof *o);
    if (!o)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    options_init(o);
    *out = o;
    return GPUPROBE_OK;
}

void gpuprobe_matmul_options_destroy(gpuprobe_matmul_options *opts)
{
    free(opts);
}

gpuprobe_status gpuprobe_matmul_param_bounds(gpuprobe_matmul_param param,
                                             int64_t *lower, int64_t *upper)
{
    if (!param_known(param) || !lower || !upper)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *lower = param_info[param].lower;
    *upper = param_info[param].upper;
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_matmul_options_set(gpuprobe_matmul_options *opts,
                                            gpuprobe_matmul_param param,
                                            int64_t value)
{
    if (!opts || !param_known(param))
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (value < param_info[param].lower || value > param_info[param].upper)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    opts->value[param] = value;
    opts->set |= 1u << param;
    return GPUPROBE_OK;
}

static int64_t opt(const gpuprobe_matmul_options *o, gpuprobe_matmul_param p)
{
    if ((p == GPUPROBE_MATMUL_N || p == GPUPROBE_MATMUL_K) &&
        !(o->set & (1u << p)))
        return o->value[GPUPROBE_MATMUL_M];
    return o->value[p];
}

gpuprobe_status gpuprobe_matmul_options_get(const gpuprobe_matmul_options *opts,
                                            gpuprobe_matmul_param param,
                                            int64_t *value)
{
    if (!opts || !value || !param_known(param))
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *value = opt(opts, param);
    return GPUPROBE_OK;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

#define GP_MM_NDOUBLE 13 /* metrics 0..12 are doubles */

struct gpuprobe_matmul_result {
    double d[GP_MM_NDOUBLE];
    int64_t verified, runs, threads, m, n, k, dtype, device;
    char device_name[GP_NAME_LEN];
    char backend[128];
    char math_mode[96];
    char compute_type[64];
};

void gpuprobe_matmul_result_destroy(gpuprobe_matmul_result *result)
{
    free(result);
}

gpuprobe_status
gpuprobe_matmul_result_get_double(const gpuprobe_matmul_result *result,
                                  gpuprobe_matmul_metric metric, double *value)
{
    if (!result || !value || (unsigned)metric >= GP_MM_NDOUBLE)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *value = result->d[metric];
    return GPUPROBE_OK;
}

gpuprobe_status
gpuprobe_matmul_result_get_int(const gpuprobe_matmul_result *result,
                               gpuprobe_matmul_metric metric, int64_t *value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_METRIC_VERIFIED: *value = result->verified; break;
    case GPUPROBE_METRIC_RUNS: *value = result->runs; break;
    case GPUPROBE_METRIC_THREADS: *value = result->threads; break;
    case GPUPROBE_METRIC_M: *value = result->m; break;
    case GPUPROBE_METRIC_N: *value = result->n; break;
    case GPUPROBE_METRIC_K: *value = result->k; break;
    case GPUPROBE_METRIC_DTYPE: *value = result->dtype; break;
    case GPUPROBE_METRIC_DEVICE: *value = result->device; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

gpuprobe_status
gpuprobe_matmul_result_get_string(const gpuprobe_matmul_result *result,
                                  gpuprobe_matmul_metric metric,
                                  const char **value)
{
    if (!result || !value)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    switch (metric) {
    case GPUPROBE_METRIC_DEVICE_NAME: *value = result->device_name; break;
    case GPUPROBE_METRIC_BACKEND: *value = result->backend; break;
    case GPUPROBE_METRIC_MATH_MODE: *value = result->math_mode; break;
    case GPUPROBE_METRIC_COMPUTE_TYPE: *value = result->compute_type; break;
    default: return GPUPROBE_ERR_INVALID_ARGUMENT;
    }
    return GPUPROBE_OK;
}

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

uint64_t gp_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t stream_state(uint64_t seed, uint64_t stream)
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
    uint64_t s = stream_state(seed, stream);
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
 * DESIGN.md quotes "bf16 ~2^-8": that is the error against the *unrounded*
 * inputs; here the reference uses the rounded inputs, which isolates the
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

/* ------------------------------------------------------------------------ */
/* Verification                                                             */
/* ------------------------------------------------------------------------ */

static void check_entry(gp_mm_job *job, const void *a, gp_elem ea,
                        const void *b, gp_elem eb, const void *c, gp_elem ec,
                        size_t i, size_t j, int *any_nan)
{
    size_t n = (size_t)job->n, k = (size_t)job->k;
    /* long double: at least double; 64-bit significand on x86-64, so the
     * reference's own error is far below every tolerance. */
    long double ref = 0.0L, scale = 0.0L, squares = 0.0L;
    for (size_t p = 0; p < k; p++) {
        long double prod = (long double)gp_elem_get(a, ea, i * k + p) *
                           (long double)gp_elem_get(b, eb, p * n + j);
        ref += prod;
        scale += prod < 0 ? -prod : prod;
        squares += ref * ref; /* the partial sums, for the spread */
    }
    if (scale > 0) {
        double spread = (double)(sqrtl(squares) / scale);
        if (spread > job->spread)
            job->spread = spread;
    }
    double value = gp_elem_get(c, ec, i * n + j);
    double err;
    if (isnan(value)) {
        err = NAN;
        *any_nan = 1;
    } else if (scale > 0) {
        err = (double)(fabsl((long double)value - ref) / scale);
    } else {
        err = (long double)value == ref ? 0.0 : INFINITY;
    }
    int worse;
    if (job->worst_i < 0)
        worse = 1;
    else if (isnan(err))
        worse = !isnan(job->max_error);
    else
        worse = !isnan(job->max_error) && err > job->max_error;
    if (worse) {
        job->max_error = err;
        job->worst_i = (int64_t)i;
        job->worst_j = (int64_t)j;
        job->worst_value = value;
        job->worst_ref = (double)ref;
    }
}

void gp_mm_verify(gp_mm_job *job, const void *a, gp_elem ea, const void *b,
                  gp_elem eb, void *c, gp_elem ec)
{
    if (gp_test_matmul_corrupt)
        gp_test_matmul_corrupt(c, ec, job->m, job->n);

    size_t m = (size_t)job->m, n = (size_t)job->n;
    int any_nan = 0;
    job->max_error = 0.0;
    job->spread = 0.0;
    job->worst_i = job->worst_j = -1;

    uint64_t samples = (uint64_t)job->verify_samples;
    if ((uint64_t)m * n <= samples) {
        /* Small output: check every entry. (m * n cannot overflow here:
         * both are < 2^31.) */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                check_entry(job, a, ea, b, eb, c, ec, i, j, &any_nan);
    } else {
        /* The four corners catch layout and edge bugs; the rest are
         * seeded random entries (with repetition). */
        const size_t ci[4] = {0, 0, m - 1, m - 1};
        const size_t cj[4] = {0, n - 1, 0, n - 1};
        uint64_t s = stream_state((uint64_t)job->seed, 3);
        for (uint64_t t = 0; t < samples; t++) {
            size_t i, j;
            if (t < 4) {
                i = ci[t];
                j = cj[t];
            } else {
                i = (size_t)(gp_splitmix64(&s) % m);
                j = (size_t)(gp_splitmix64(&s) % n);
            }
            check_entry(job, a, ea, b, eb, c, ec, i, j, &any_nan);
        }
    }
    if (any_nan)
        job->max_error = NAN;
    job->tolerance = gp_matmul_tolerance(job->dtype, job->k, job->spread);
    job->verified = !any_nan && job->max_error <= job->tolerance;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

static gp_elem input_elem(gpuprobe_dtype d)
{
    switch (d) {
    case GPUPROBE_DTYPE_FP64: return GP_ELEM_F64;
    case GPUPROBE_DTYPE_FP16: return GP_ELEM_F16;
    case GPUPROBE_DTYPE_BF16: return GP_ELEM_BF16;
    default: return GP_ELEM_F32;
    }
}

/* Host bytes the run needs: A, B, C (C is fp32 for every GPU dtype, fp64
 * for fp64). */
static gpuprobe_status host_bytes(gpuprobe_context *ctx, const gp_mm_job *job,
                                  size_t *total)
{
    size_t ein = gp_elem_size(input_elem(job->dtype));
    size_t eout = job->dtype == GPUPROBE_DTYPE_FP64 ? 8 : 4;
    size_t ba, bb, bc;
    if (gp_mm_bytes(job->m, job->k, ein, &ba) || gp_mm_bytes(job->k, job->n, ein, &bb) ||
        gp_mm_bytes(job->m, job->n, eout, &bc) || ba > SIZE_MAX - bb ||
        ba + bb > SIZE_MAX - bc)
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW,
                       "matmul %lldx%lldx%lld %s: the buffers' size does not "
                       "fit in size_t",
                       (long long)job->m, (long long)job->n, (long long)job->k,
                       gpuprobe_dtype_name(job->dtype));
    *total = ba + bb + bc;
    return GPUPROBE_OK;
}

gpuprobe_status gp_mm_check_host(gpuprobe_context *ctx, const gp_mm_job *job,
                                 uint64_t extra_memory, const char *memory_text,
                                 uint64_t extra_space, const char *space_text)
{
    size_t abc = 0;
    gpuprobe_status st = host_bytes(ctx, job, &abc);
    if (st != GPUPROBE_OK)
        return st;
    gp_host_memory hm;
    st = gp_host_memory_read(ctx, ctx->sysroot, &hm);
    if (st == GPUPROBE_ERR_OUT_OF_MEMORY)
        return st;
    if (st != GPUPROBE_OK) {
        /* Unknown: go ahead; a failed allocation is still reported. */
        ctx->error[0] = '\0';
        return GPUPROBE_OK;
    }
    /* Each of A, B and C is its own mapping, a page more than asked. */
    uint64_t memory = (uint64_t)abc, space = (uint64_t)abc + 3 * 4096;
    memory = extra_memory > UINT64_MAX - memory ? UINT64_MAX : memory + extra_memory;
    space = extra_space > UINT64_MAX - space ? UINT64_MAX : space + extra_space;
    char what[96], mdetail[192], sdetail[256];
    gp_snprintf(what, sizeof what, "matmul %lldx%lldx%lld %s", (long long)job->m,
                (long long)job->n, (long long)job->k, gpuprobe_dtype_name(job->dtype));
    gp_snprintf(mdetail, sizeof mdetail, "A, B and C %llu bytes%s%s",
                (unsigned long long)abc, memory_text ? ", " : "",
                memory_text ? memory_text : "");
    gp_snprintf(sdetail, sizeof sdetail, "A, B and C %llu bytes%s%s",
                (unsigned long long)abc, space_text ? ", " : "",
                space_text ? space_text : "");
    return gp_host_fits(ctx, &hm, memory, mdetail, space, sdetail, what);
}

static gpuprobe_status check_dtype(gpuprobe_context *ctx, const gp_device *dev,
                                   gpuprobe_dtype dt)
{
    if ((unsigned)dt > GPUPROBE_DTYPE_BF16)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "matmul dtype %d is not fp32, fp64, tf32, fp16 or bf16",
                       (int)dt);
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        if (dt != GPUPROBE_DTYPE_FP32 && dt != GPUPROBE_DTYPE_FP64)
            return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                           "matmul in %s needs a CUDA device; the CPU "
                           "backend (OpenBLAS) does fp32 and fp64",
                           gpuprobe_dtype_name(dt));
        return GPUPROBE_OK;
    }
    if (dt == GPUPROBE_DTYPE_FP64)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "matmul in fp64 is done on the CPU only; CUDA devices "
                       "do fp32, tf32, fp16 and bf16");
    char name[80];
    gp_quote(name, sizeof name, dev->name, 64);
    if ((dt == GPUPROBE_DTYPE_TF32 || dt == GPUPROBE_DTYPE_BF16) &&
        dev->cc_major < 8)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "matmul in %s needs compute capability 8.0 or later "
                       "(Ampere tensor cores); %s (%s) is %d.%d",
                       gpuprobe_dtype_name(dt), dev->spec, name, dev->cc_major,
                       dev->cc_minor);
    return GPUPROBE_OK;
}

static void fill_result(gpuprobe_matmul_result *r, const gp_mm_job *job)
{
    size_t nr = job->runs;
    double *t = job->times;
    r->d[GPUPROBE_METRIC_MIN_S] = gp_stats_min(t, nr);
    r->d[GPUPROBE_METRIC_MAX_S] = gp_stats_max(t, nr);
    r->d[GPUPROBE_METRIC_MEAN_S] = gp_stats_mean(t, nr);
    r->d[GPUPROBE_METRIC_STDDEV_S] = gp_stats_stddev(t, nr);
    double median = gp_stats_median_inplace(t, nr); /* sorts: last */
    r->d[GPUPROBE_METRIC_MEDIAN_S] = median;
    double flop = 2.0 * (double)job->m * (double)job->n * (double)job->k;
    double gflops = median > 0 ? flop / median / 1e9 : 0.0;
    r->d[GPUPROBE_METRIC_GFLOPS] = gflops;
    r->d[GPUPROBE_METRIC_SETUP_S] = job->setup_s;
    r->d[GPUPROBE_METRIC_H2D_S] = job->h2d_s;
    r->d[GPUPROBE_METRIC_D2H_S] = job->d2h_s;
    r->d[GPUPROBE_METRIC_MAX_ERROR] = job->verified < 0 ? 0.0 : job->max_error;
    r->d[GPUPROBE_METRIC_TOLERANCE] = job->verified < 0 ? 0.0 : job->tolerance;

    const gp_device *dev = job->dev;
    double peak = 0.0;
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        /* Cores doing the work: the threads used, at most the cores. */
        int cores = job->threads;
        if (dev->logical_cores > 0 && (cores <= 0 || cores > dev->logical_cores))
            cores = dev->logical_cores;
        peak = (double)dev->clock_khz * 1e3 * (double)cores *
               gp_cpu_flops_per_cycle(dev->simd, job->dtype) / 1e9;
    } else {
        peak = (double)dev->clock_khz * 1e3 * (double)dev->multiprocessors *
               gp_gpu_flops_per_clock_sm(dev->cc_major, dev->cc_minor,
                                         job->dtype) / 1e9;
    }
    if (!(peak > 0))
        peak = 0.0;
    r->d[GPUPROBE_METRIC_PEAK_GFLOPS] = peak;
    r->d[GPUPROBE_METRIC_PEAK_FRACTION] = peak > 0 ? gflops / peak : 0.0;

    r->verified = job->verified;
    r->runs = (int64_t)nr;
    r->threads = job->threads;
    r->m = job->m;
    r->n = job->n;
    r->k = job->k;
    r->dtype = job->dtype;
    r->device = (int64_t)job->device_index;
    gp_strlcpy(r->device_name, dev->name, sizeof r->device_name);
    gp_strlcpy(r->backend, job->backend, sizeof r->backend);
    gp_strlcpy(r->math_mode, job->math_mode, sizeof r->math_mode);
    gp_strlcpy(r->compute_type, job->compute_type, sizeof r->compute_type);
}

gpuprobe_status gpuprobe_matmul_run(gpuprobe_context *ctx, size_t device,
                                    const gpuprobe_matmul_options *opts,
                                    unsigned flags,
                                    gpuprobe_matmul_result **out)
{
    if (out)
        *out = NULL; /* documented: NULL on every failure but VERIFY_FAILED */
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_matmul_run: out is NULL");
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_matmul_run: flags must be 0 (got 0x%x)", flags);

    gpuprobe_matmul_options defaults;
    if (!opts) {
        options_init(&defaults);
        opts = &defaults;
    }

    gp_mm_job job;
    memset(&job, 0, sizeof job);
    job.m = opt(opts, GPUPROBE_MATMUL_M);
    job.n = opt(opts, GPUPROBE_MATMUL_N);
    job.k = opt(opts, GPUPROBE_MATMUL_K);
    job.dtype = (gpuprobe_dtype)opt(opts, GPUPROBE_MATMUL_DTYPE);
    job.warmup = opt(opts, GPUPROBE_MATMUL_WARMUP);
    job.min_runs = opt(opts, GPUPROBE_MATMUL_MIN_RUNS);
    job.max_runs = opt(opts, GPUPROBE_MATMUL_MAX_RUNS);
    if (job.max_runs < job.min_runs)
        job.max_runs = job.min_runs;
    job.budget_ms = opt(opts, GPUPROBE_MATMUL_BUDGET_MS);
    job.transfers = (int)opt(opts, GPUPROBE_MATMUL_TRANSFERS);
    job.verify = (int)opt(opts, GPUPROBE_MATMUL_VERIFY);
    job.seed = (uint64_t)opt(opts, GPUPROBE_MATMUL_SEED);
    job.cpu_threads = opt(opts, GPUPROBE_MATMUL_CPU_THREADS);
    job.verify_samples = opt(opts, GPUPROBE_MATMUL_VERIFY_SAMPLES);
    job.verified = -1;
    job.device_index = device;

    /* The options object only holds in-range values, but the defaults
     * struct and a future setter must not be trusted blindly. */
    if (job.m < 1 || job.n < 1 || job.k < 1 || job.m > INT32_MAX ||
        job.n > INT32_MAX || job.k > INT32_MAX)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "matmul sizes must be in [1, %d]", INT32_MAX);

    const gp_device *dev = NULL;
    gpuprobe_status st = gp_get_device(ctx, device, &dev);
    if (st != GPUPROBE_OK)
        return st;
    job.dev = dev;

    st = check_dtype(ctx, dev, job.dtype);
    if (st != GPUPROBE_OK)
        return st;
    /* Host memory: here for CUDA (A, B and C in pinned buffers); the CPU
     * backend adds what OpenBLAS needs once it knows it. */
    size_t need = 0;
    st = host_bytes(ctx, &job, &need);
    if (st != GPUPROBE_OK)
        return st;
    if (dev->kind != GPUPROBE_DEVICE_CPU) {
        st = gp_mm_check_host(ctx, &job, 0, NULL, 0, NULL);
        if (st != GPUPROBE_OK)
            return st;
    }

    job.times = calloc((size_t)job.max_runs, sizeof *job.times);
    if (!job.times)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating %lld run times",
                       (long long)job.max_runs);

    if (dev->kind == GPUPROBE_DEVICE_CPU)
        st = gp_cpu_matmul(ctx, &job);
    else
        st = gp_cuda_matmul(ctx, &job);
    if (st != GPUPROBE_OK) {
        free(job.times);
        return st;
    }
    if (job.runs == 0) {
        free(job.times);
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL, "matmul backend made no runs");
    }

    gpuprobe_matmul_result *r = calloc(1, sizeof *r);
    if (!r) {
        free(job.times);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating the matmul result");
    }
    fill_result(r, &job);
    free(job.times);
    *out = r;

    if (job.verified == 0) {
        if (job.worst_i < 0)
            return gp_fail(ctx, GPUPROBE_ERR_VERIFY_FAILED,
                           "matmul %s on %s failed verification",
                           gpuprobe_dtype_name(job.dtype), dev->spec);
        return gp_fail(ctx, GPUPROBE_ERR_VERIFY_FAILED,
                       "matmul %s on %s failed verification: C[%lld][%lld] = "
                       "%.9g, reference %.9g, scaled error %.3g %s tolerance "
                       "%.3g",
                       gpuprobe_dtype_name(job.dtype), dev->spec,
                       (long long)job.worst_i, (long long)job.worst_j,
                       job.worst_value, job.worst_ref, job.max_error,
                       isnan(job.max_error) ? "(NaN) vs" : ">", job.tolerance);
    }
    return gp_ok(ctx);
}
