/*
 * cpu_bf16.c - the CPU's bf16 matmul: a gemm of the library's own, with
 * one of two kernels, whichever the CPU has (AMX first):
 *  - AMX: Intel's AMX tiles (TDPBF16PS: bf16 products, fp32 sums), on the
 *    CPUs that have AMX-BF16 (Xeon Sapphire Rapids and later);
 *  - AVX512: VDPBF16PS on zmm registers (the same arithmetic), on the CPUs
 *    that have AVX512-BF16 but no AMX (Xeon Cooper Lake, AMD Zen 4 and
 *    later), or whose AMX Linux does not grant.
 * Debian's OpenBLAS has no bf16 gemm, and frameworks run bf16 on these
 * CPUs through these instructions (oneDNN), so a bf16 figure timed as fp32
 * would be 2-3 times too slow (docs/speed.md).
 *
 * The product is blocked as a BLAS's is. Each thread owns a range of C's
 * columns (whole blocks of 32). For each KC-deep slice of k it packs up to
 * MC rows of A into 16 x 32 tiles, then each NC-wide block of its B columns
 * into tiles of 16 pairs of rows x 16 columns (B's pairs interleaved, as
 * both instructions read them), and runs the inner kernel over them: a
 * 32 x 32 block of C, in four accumulator tiles (AMX: two A and two B
 * tiles loaded per 32 of k) or eight rows at a time in 16 registers
 * (AVX512: a row of a B tile is one register, 16 columns' pairs of k; each
 * row's pair of A is broadcast to the 16 lanes). A and B are padded with
 * zeros to whole tiles; C blocks at the edges go through a buffer of the
 * thread's own. Packing is part of every call, as it is of cblas_sgemm's:
 * the figure is a gemm from plain row-major arrays, not from weights
 * packed once.
 *
 * Linux hands the AMX state to a process only when asked
 * (arch_prctl(ARCH_REQ_XCOMP_PERM), 5.16 and later); gp_cpu_bf16() asks
 * once, the first time a bf16 matmul on the CPU is wanted. The grant is
 * the process's and lasts, as it does when a framework asks.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cpu_bf16.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if GPUPROBE_HAVE_BF16_KERNELS
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* The blocking: k slices of KC (16 steps of 32), C blocks of NC columns
 * per packed B block (KC x NC bf16 = 256 KiB, for the L2 cache), at most
 * MC rows of A packed at once (MC x KC bf16 = 1 MiB). */
#define GP_BF16_KC 512
#define GP_BF16_NC 256
#define GP_BF16_MC 1024
/* A product of fewer FLOPs than this runs on one thread: waking the others
 * would cost more than it saves. */
#define GP_BF16_ONE_THREAD_FLOPS 4.0e6
/* The most threads it starts, whatever is asked (OpenBLAS's Debian build
 * stops at 64). */
#define GP_BF16_MAX_THREADS 256
#define GP_BF16_STACK ((size_t)256 << 10)

/* Bytes a thread packs into: A's rows, B's block, a 32 x 32 fp32 C. */
#define GP_BF16_A_BYTES ((size_t)GP_BF16_MC * GP_BF16_KC * 2)
#define GP_BF16_B_BYTES ((size_t)GP_BF16_NC * GP_BF16_KC * 2)
#define GP_BF16_C_BYTES ((size_t)32 * 32 * 4)

uint64_t gp_bf16_gemm_cost(size_t used)
{
    return (uint64_t)used *
           (GP_BF16_A_BYTES + GP_BF16_B_BYTES + GP_BF16_C_BYTES + 3 * 64 + GP_BF16_STACK);
}

typedef struct bf16_part {
    struct gp_bf16_gemm *g;
    size_t lo, hi;        /* its columns of C */
    uint16_t *ap, *bp;    /* packed A and B */
    float *cbuf;          /* an edge block of C */
} bf16_part;

struct gp_bf16_gemm {
    int kernel;           /* GP_BF16_AMX or GP_BF16_AVX512 */
    size_t m, n, k;
    const uint16_t *a, *b;
    float *c;
    size_t nthreads, used;
    bf16_part *p;
    gp_pool *pool;        /* the threads of p[1..]; p[0] is the caller's */
};

/* ---- the kernels ---------------------------------------------------------- */

#if GPUPROBE_HAVE_BF16_KERNELS

#define GP_AMX_TARGET __attribute__((target("avx512f,avx512bw,amx-tile,amx-bf16")))
#define GP_AVX512_TARGET __attribute__((target("avx512f,avx512bw")))
#define GP_AVX512_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* The tile configuration: palette 1, eight tiles of 16 rows x 64 bytes.
 * Loaded by the thread's own instruction: GCC 12's _tile_loadconfig tells
 * the compiler it reads 8 bytes of the 64, so the stores that fill the rest
 * could be dropped. */
typedef struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

GP_AMX_TARGET static void tiles_on(void)
{
    tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 8; i++) {
        cfg.colsb[i] = 64;
        cfg.rows[i] = 16;
    }
    __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

GP_AMX_TARGET static void tiles_off(void) { _tile_release(); }

/* C (32 x 32 fp32, rows ldc floats apart) = C (LOAD) or 0, plus the packed
 * A (32 rows) times the packed B (32 columns), STEPS times 32 of k. Tiles
 * 0-3: C; 4, 5: A's two halves; 6, 7: B's. */
GP_AMX_TARGET static void inner(const uint16_t *ap, const uint16_t *bp, size_t steps,
                                float *c, size_t ldc, int load)
{
    const size_t ld = ldc * sizeof(float);
    float *c1 = c + 16 * ldc;
    if (load) {
        _tile_loadd(0, c, ld);
        _tile_loadd(1, c + 16, ld);
        _tile_loadd(2, c1, ld);
        _tile_loadd(3, c1 + 16, ld);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (size_t s = 0; s < steps; s++, ap += 1024, bp += 1024) {
        _tile_loadd(4, ap, 64);
        _tile_loadd(6, bp, 64);
        _tile_loadd(5, ap + 512, 64);
        _tile_loadd(7, bp + 512, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, ld);
    _tile_stored(1, c + 16, ld);
    _tile_stored(2, c1, ld);
    _tile_stored(3, c1 + 16, ld);
}

/* The same product as inner(), with VDPBF16PS on zmm registers: eight rows
 * of C at a time in 16 accumulators (columns 0-15 and 16-31 of each row).
 * For each pair of k the two B tile rows are loaded once (a row is the 16
 * columns' pairs, lane j holding B's rows 2p and 2p + 1 of column j, as
 * VDPBF16PS pairs its lanes) and each of the eight rows' pair of A, side by
 * side in the packed A, is broadcast to all 16 lanes. */
GP_AVX512_BF16_TARGET static void inner_avx512(const uint16_t *ap, const uint16_t *bp,
                                               size_t steps, float *c, size_t ldc, int load)
{
    for (size_t r0 = 0; r0 < 32; r0 += 8) {
        __m512 acc[8][2];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            const float *cr = c + (r0 + (size_t)r) * ldc;
            acc[r][0] = load ? _mm512_loadu_ps(cr) : _mm512_setzero_ps();
            acc[r][1] = load ? _mm512_loadu_ps(cr + 16) : _mm512_setzero_ps();
        }
        for (size_t s = 0; s < steps; s++) {
            const uint16_t *as = ap + s * 1024 + r0 * 32, *bs = bp + s * 1024;
            for (size_t p = 0; p < 16; p++) {
                const __m512bh b0 = (__m512bh)_mm512_load_si512(bs + p * 32);
                const __m512bh b1 = (__m512bh)_mm512_load_si512(bs + 512 + p * 32);
#pragma GCC unroll 8
                for (int r = 0; r < 8; r++) {
                    uint32_t pair;
                    memcpy(&pair, as + (size_t)r * 32 + 2 * p, sizeof pair);
                    const __m512bh a = (__m512bh)_mm512_set1_epi32((int)pair);
                    acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
                    acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
                }
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            float *cr = c + (r0 + (size_t)r) * ldc;
            _mm512_storeu_ps(cr, acc[r][0]);
            _mm512_storeu_ps(cr + 16, acc[r][1]);
        }
    }
}

/* Rows [r0, r0 + 32) of A (lda elements apart, m rows), columns [k0, k0 +
 * kl), as steps of two 16 x 32 tiles; rows past m and columns past kl 0. */
GP_AVX512_TARGET static void pack_a(const uint16_t *a, size_t lda, size_t m, size_t r0,
                                 size_t k0, size_t kl, uint16_t *ap)
{
    const size_t steps = (kl + 31) / 32;
    for (size_t s = 0; s < steps; s++) {
        size_t left = kl - s * 32;
        __mmask32 mk = left >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << left) - 1);
        for (size_t r = 0; r < 32; r++) {
            size_t row = r0 + r;
            __m512i v = row < m ? _mm512_maskz_loadu_epi16(mk, a + row * lda + k0 + s * 32)
                                : _mm512_setzero_si512();
            /* tile r / 16 of step s, its row r % 16 */
            _mm512_store_si512(ap + s * 1024 + r * 32, v);
        }
    }
}

/* Rows [k0, k0 + kl) of B (ldb elements apart, n columns), columns [c0,
 * c0 + 32), as steps of two tiles of 16 row pairs x 16 columns: element
 * (p, j) of a tile is B's rows 2p and 2p + 1 of column j, side by side.
 * Rows past kl and columns past n 0. */
GP_AVX512_TARGET static void pack_b(const uint16_t *b, size_t ldb, size_t n, size_t k0,
                                 size_t kl, size_t c0, uint16_t *bp)
{
    /* Lanes of the two rows in the order a tile row wants them: column j
     * of the first row, then of the second; columns 0-15, then 16-31. */
    static const uint16_t first[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                       37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                       11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    static const uint16_t second[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                        53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                        27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
    const __m512i lo = _mm512_loadu_si512(first), hi = _mm512_loadu_si512(second);
    const size_t cl = n - c0 < 32 ? n - c0 : 32, steps = (kl + 31) / 32;
    const __mmask32 mc = cl >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << cl) - 1);
    for (size_t s = 0; s < steps; s++) {
        for (size_t p = 0; p < 16; p++) {
            size_t k = s * 32 + 2 * p;
            __m512i r0 = k < kl ? _mm512_maskz_loadu_epi16(mc, b + (k0 + k) * ldb + c0)
                                : _mm512_setzero_si512();
            __m512i r1 = k + 1 < kl ? _mm512_maskz_loadu_epi16(mc, b + (k0 + k + 1) * ldb + c0)
                                    : _mm512_setzero_si512();
            _mm512_store_si512(bp + s * 1024 + p * 32, _mm512_permutex2var_epi16(r0, lo, r1));
            _mm512_store_si512(bp + s * 1024 + 512 + p * 32,
                               _mm512_permutex2var_epi16(r0, hi, r1));
        }
    }
}

/* The 32 x 32 block of C at (r0, c0): in place when whole, else through
 * the thread's buffer (the part inside C copied in and out). */
static void block(const struct gp_bf16_gemm *g, const bf16_part *p, const uint16_t *ap,
                  const uint16_t *bp, size_t steps, size_t r0, size_t c0, int load)
{
    const size_t m = g->m, n = g->n;
    void (*const kernel)(const uint16_t *, const uint16_t *, size_t, float *, size_t, int) =
        g->kernel == GP_BF16_AMX ? inner : inner_avx512;
    if (r0 + 32 <= m && c0 + 32 <= n) {
        kernel(ap, bp, steps, g->c + r0 * n + c0, n, load);
        return;
    }
    const size_t rl = m - r0 < 32 ? m - r0 : 32, cl = n - c0 < 32 ? n - c0 : 32;
    float *t = p->cbuf;
    if (load) {
        memset(t, 0, GP_BF16_C_BYTES);
        for (size_t r = 0; r < rl; r++)
            memcpy(t + r * 32, g->c + (r0 + r) * n + c0, cl * sizeof(float));
    }
    kernel(ap, bp, steps, t, 32, load);
    for (size_t r = 0; r < rl; r++)
        memcpy(g->c + (r0 + r) * n + c0, t + r * 32, cl * sizeof(float));
}

/* A thread's part of the product: its columns [lo, hi) of C. */
static void part(const struct gp_bf16_gemm *g, const bf16_part *p)
{
    const size_t m = g->m, n = g->n, k = g->k;
    if (p->lo >= p->hi)
        return;
    const int amx = g->kernel == GP_BF16_AMX;
    if (amx)
        tiles_on();
    for (size_t k0 = 0; k0 < k; k0 += GP_BF16_KC) {
        const size_t kl = k - k0 < GP_BF16_KC ? k - k0 : GP_BF16_KC, steps = (kl + 31) / 32;
        const size_t panel = steps * 1024; /* elements of a packed 32-wide panel */
        for (size_t m0 = 0; m0 < m; m0 += GP_BF16_MC) {
            const size_t ml = m - m0 < GP_BF16_MC ? m - m0 : GP_BF16_MC, mbs = (ml + 31) / 32;
            for (size_t i = 0; i < mbs; i++)
                pack_a(g->a, k, m, m0 + i * 32, k0, kl, p->ap + i * panel);
            for (size_t n0 = p->lo; n0 < p->hi; n0 += GP_BF16_NC) {
                const size_t nl = p->hi - n0 < GP_BF16_NC ? p->hi - n0 : GP_BF16_NC;
                const size_t nbs = (nl + 31) / 32;
                for (size_t j = 0; j < nbs; j++)
                    pack_b(g->b, n, n, k0, kl, n0 + j * 32, p->bp + j * panel);
                for (size_t i = 0; i < mbs; i++)
                    for (size_t j = 0; j < nbs; j++)
                        block(g, p, p->ap + i * panel, p->bp + j * panel, steps,
                              m0 + i * 32, n0 + j * 32, k0 > 0);
            }
        }
    }
    if (amx)
        tiles_off();
}

/* ---- whether it can run -------------------------------------------------- */

/* ARCH_REQ_XCOMP_PERM and XFEATURE_XTILEDATA (asm/prctl.h, Linux 5.16;
 * spelled out for older headers). */
#define GP_ARCH_REQ_XCOMP_PERM 0x1023
#define GP_XFEATURE_XTILEDATA 18

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static unsigned kernels_ok;           /* bit 1 << GP_BF16_*: the kernel runs here */
static char amx_why[96], avx_why[64]; /* why not, for each */

static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) {
        gp_strlcpy(amx_why, "the CPU has no XSAVE state enabled (cpuid: no OSXSAVE)",
                   sizeof amx_why);
        return;
    }
    if (__get_cpuid_max(0, NULL) < 7) {
        gp_strlcpy(amx_why, "the CPU has no AMX-BF16 or AVX512-BF16 (cpuid has no leaf 7)",
                   sizeof amx_why);
        return;
    }
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned subleaves = a;
    const int tile = (d >> 24) & 1, amx_bf16 = (d >> 22) & 1;
    const int avx512 = ((b >> 16) & 1) && ((b >> 30) & 1); /* AVX512F, AVX512BW */
    int avx512_bf16 = 0;
    if (subleaves >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        avx512_bf16 = (a >> 5) & 1;
    }
    /* The OS saves x87, SSE, AVX and the AVX-512 state (opmask, upper
     * halves of zmm0-15, zmm16-31); for AMX both tile parts too. */
    const uint64_t xcr0 = read_xcr0(), zmm = 0x7 | 0xe0, tiles = 3u << 17;
    if (!avx512 || !avx512_bf16)
        gp_snprintf(avx_why, sizeof avx_why, "the CPU has no %s (cpuid)",
                    !avx512 ? "AVX512BW" : "AVX512-BF16");
    else if ((xcr0 & zmm) != zmm)
        gp_strlcpy(avx_why, "the kernel does not enable the AVX-512 state (XCR0)",
                   sizeof avx_why);
    else
        kernels_ok |= 1u << GP_BF16_AVX512;

    if (!tile || !amx_bf16 || !avx512) {
        gp_snprintf(amx_why, sizeof amx_why, "the CPU has no %s (cpuid)",
                    !tile ? "AMX-TILE" : !amx_bf16 ? "AMX-BF16" : "AVX512BW");
        return;
    }
    if ((xcr0 & (zmm | tiles)) != (zmm | tiles)) {
        gp_strlcpy(amx_why, "the kernel does not enable the AMX state (XCR0)", sizeof amx_why);
        return;
    }
    if (syscall(SYS_arch_prctl, GP_ARCH_REQ_XCOMP_PERM, GP_XFEATURE_XTILEDATA) != 0) {
        int e = errno;
        gp_snprintf(amx_why, sizeof amx_why, "Linux refused the AMX state (arch_prctl: %s%s)",
                    strerror(e), e == EINVAL ? "; Linux 5.16 or later grants it" : "");
        return;
    }
    kernels_ok |= 1u << GP_BF16_AMX;
}

#else /* !GPUPROBE_HAVE_BF16_KERNELS */

static void part(const struct gp_bf16_gemm *g, const bf16_part *p)
{
    (void)g;
    (void)p;
}

#endif

int gp_test_bf16_kernel;

int gp_cpu_bf16(const gpuprobe_context *ctx, char *why, size_t n)
{
    if (ctx->env_amx_off) {
        gp_strlcpy(why, "GPUPROBE_CPU_AMX turns it off", n);
        return 0;
    }
#if GPUPROBE_HAVE_BF16_KERNELS
    (void)pthread_once(&detect_once, detect);
    const int want = gp_test_bf16_kernel;
    if (want == GP_BF16_AMX || want == GP_BF16_AVX512) {
        if (kernels_ok & (1u << want))
            return want;
        gp_strlcpy(why, want == GP_BF16_AMX ? amx_why : avx_why, n);
        return 0;
    }
    if (kernels_ok & (1u << GP_BF16_AMX))
        return GP_BF16_AMX;
    if (kernels_ok & (1u << GP_BF16_AVX512))
        return GP_BF16_AVX512;
    if (avx_why[0])
        gp_snprintf(why, n, "%s; %s", amx_why, avx_why);
    else
        gp_strlcpy(why, amx_why, n);
    return 0;
#else
    gp_strlcpy(why, "this build of the library has no bf16 kernel (x86-64 with GCC 11 or "
                    "Clang 12 and later builds it)", n);
    return 0;
#endif
}

const char *gp_bf16_kernel_name(int kernel)
{
    return kernel == GP_BF16_AMX ? "AMX-BF16" : kernel == GP_BF16_AVX512 ? "AVX512-BF16" : "";
}

double gp_bf16_flops_per_cycle(int kernel)
{
    return kernel == GP_BF16_AMX      ? GP_AMX_BF16_FLOPS_PER_CYCLE
           : kernel == GP_BF16_AVX512 ? GP_AVX512_BF16_FLOPS_PER_CYCLE
                                      : 0.0;
}

/* ---- the threads ------------------------------------------------------------ */

static void run_part(void *arg)
{
    bf16_part *p = arg;
    part(p->g, p);
}

void gp_bf16_gemm_run(gp_bf16_gemm *g)
{
    gp_pool_run(g->pool, run_part, &g->p[0]);
}

void gp_bf16_gemm_close(gp_bf16_gemm *g)
{
    if (!g)
        return;
    gp_pool_close(g->pool);
    if (g->p)
        for (size_t i = 0; i < g->nthreads; i++) {
            free(g->p[i].ap);
            free(g->p[i].bp);
            free(g->p[i].cbuf);
        }
    free(g->p);
    free(g);
}

size_t gp_bf16_gemm_threads(size_t threads, size_t m, size_t n, size_t k)
{
    const size_t blocks = (n + 31) / 32;
    if (threads > GP_BF16_MAX_THREADS)
        threads = GP_BF16_MAX_THREADS;
    if (2.0 * (double)m * (double)n * (double)k < GP_BF16_ONE_THREAD_FLOPS)
        return 1;
    return threads < blocks ? threads : blocks;
}

gpuprobe_status gp_bf16_gemm_open(gpuprobe_context *ctx, int kernel, size_t threads, size_t m,
                                  size_t n, size_t k, const uint16_t *a, const uint16_t *b,
                                  float *c, gp_bf16_gemm **out, size_t *used)
{
    *out = NULL;
    struct gp_bf16_gemm *g = calloc(1, sizeof *g);
    if (!g)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the bf16 gemm");
    g->kernel = kernel;
    g->m = m;
    g->n = n;
    g->k = k;
    g->a = a;
    g->b = b;
    g->c = c;
    g->used = gp_bf16_gemm_threads(threads, m, n, k);
    g->nthreads = g->used;
    g->p = calloc(g->nthreads, sizeof *g->p);
    if (!g->p) {
        const size_t nthreads = g->nthreads;
        gp_bf16_gemm_close(g);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating %zu bf16 gemm threads",
                       nthreads);
    }
    const size_t blocks = (n + 31) / 32;
    for (size_t i = 0; i < g->nthreads; i++) {
        bf16_part *p = &g->p[i];
        p->g = g;
        p->lo = blocks * i / g->nthreads * 32;
        p->hi = i + 1 == g->nthreads ? n : blocks * (i + 1) / g->nthreads * 32;
        if (posix_memalign((void **)&p->ap, 64, GP_BF16_A_BYTES) != 0 ||
            posix_memalign((void **)&p->bp, 64, GP_BF16_B_BYTES) != 0 ||
            posix_memalign((void **)&p->cbuf, 64, GP_BF16_C_BYTES) != 0) {
            gp_bf16_gemm_close(g);
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "allocating the packing buffers of bf16 gemm thread %zu "
                           "(%zu bytes)",
                           i + 1, GP_BF16_A_BYTES + GP_BF16_B_BYTES + GP_BF16_C_BYTES);
        }
    }
    gpuprobe_status st = GPUPROBE_OK;
    if (g->nthreads > 1)
        st = gp_pool_open(ctx, "bf16 gemm", run_part, &g->p[1], sizeof *g->p, g->nthreads - 1,
                          GP_BF16_STACK, 1, &g->pool);
    if (st != GPUPROBE_OK) {
        gp_bf16_gemm_close(g);
        return st;
    }
    *used = g->used;
    *out = g;
    return GPUPROBE_OK;
}
