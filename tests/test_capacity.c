/*
 * test_capacity.c - capacity estimation: the exact bytes/params rules, their
 * boundaries and limits, and gpuprobe_device_capacity() on the CPU (through
 * a simulated /proc) and on simulated GPUs (the gp_test_set_cuda() seam).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"

#define MAXP GPUPROBE_MAX_PARAMS
#define N_DT 8
#define N_WL 3

/* ---- an independent reference, in 128-bit arithmetic ---- */

__extension__ typedef unsigned __int128 u128;

/* Bytes per parameter in eighths... kept as a fraction num/den. */
static int ref_rule(int dt, int wl, unsigned *half, unsigned *train)
{
    static const unsigned halves[N_DT] = {8, 16, 8, 4, 4, 2, 2, 1};
    static const unsigned trains[N_DT] = {16, 32, 0, 16, 16, 0, 0, 0};
    *half = halves[dt];
    *train = trains[dt];
    return wl == GPUPROBE_WORKLOAD_TRAINING && trains[dt] == 0 ? -1 : 0;
}

/* bytes(N) per the documented rules, in 128 bits (no limit applied). */
static u128 ref_bytes(u128 n, int dt, int wl)
{
    unsigned half, train;
    ref_rule(dt, wl, &half, &train);
    u128 w = (n * half + 1) / 2;
    if (wl == GPUPROBE_WORKLOAD_WEIGHTS)
        return w;
    if (wl == GPUPROBE_WORKLOAD_INFERENCE)
        return (6 * w + 4) / 5;
    return n * train;
}

/* Largest N with ref_bytes(N) <= b, by binary search (no formula shared
 * with the library). Searches up to 2^66. */
static u128 ref_params(u128 b, int dt, int wl)
{
    u128 lo = 0, hi = (u128)1 << 66;
    while (lo < hi) {
        u128 mid = lo + (hi - lo + 1) / 2;
        if (ref_bytes(mid, dt, wl) <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int supported(int dt, int wl)
{
    unsigned half, train;
    return ref_rule(dt, wl, &half, &train) == 0;
}

/* xorshift64*: seeded, reproducible. */
static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

/* Check the library against the reference for params n (n <= MAXP). */
static void check_bytes_at(uint64_t n, int dt, int wl)
{
    uint64_t b = 0;
    assert_int_equal(gpuprobe_capacity_bytes(n, (gpuprobe_dtype)dt,
                                             (gpuprobe_workload)wl, &b),
                     GPUPROBE_OK);
    assert_true((u128)b == ref_bytes(n, dt, wl));
}

/* Check params(b) against the reference and the exact-inverse property. */
static void check_params_at(uint64_t b, int dt, int wl)
{
    uint64_t p = 12345;
    gpuprobe_status st = gpuprobe_capacity_params(b, (gpuprobe_dtype)dt,
                                                  (gpuprobe_workload)wl, &p);
    u128 want = ref_params(b, dt, wl);
    if (want > MAXP) {
        assert_int_equal(st, GPUPROBE_ERR_OVERFLOW);
        assert_true(p == 12345); /* untouched */
        return;
    }
    assert_int_equal(st, GPUPROBE_OK);
    assert_true((u128)p == want);
    /* bytes(p) <= b < bytes(p + 1), through the library's own bytes(). */
    uint64_t bp = 0, bp1 = 0;
    assert_int_equal(gpuprobe_capacity_bytes(p, (gpuprobe_dtype)dt,
                                             (gpuprobe_workload)wl, &bp),
                     GPUPROBE_OK);
    assert_true(bp <= b);
    if (p < MAXP) {
        assert_int_equal(gpuprobe_capacity_bytes(p + 1, (gpuprobe_dtype)dt,
                                                 (gpuprobe_workload)wl, &bp1),
                         GPUPROBE_OK);
        assert_true(b < bp1);
    }
}

/* ---- explicit table ---- */

typedef struct row {
    uint64_t params;
    gpuprobe_dtype dt;
    gpuprobe_workload wl;
    gpuprobe_status st;
    uint64_t bytes;
} row;

static const row table[] = {
    /* the lesson's rule: fp16 = 2 bytes per parameter */
    {7000000000u, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 14000000000u},
    {7000000000u, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 16800000000u},
    {7000000000u, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_OK, 112000000000u},
    {7000000000u, GPUPROBE_DTYPE_BF16, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_OK, 112000000000u},
    {7000000000u, GPUPROBE_DTYPE_FP32, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 28000000000u},
    {7000000000u, GPUPROBE_DTYPE_FP32, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_OK, 112000000000u},
    {7000000000u, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 56000000000u},
    {7000000000u, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_OK, 224000000000u},
    {7000000000u, GPUPROBE_DTYPE_TF32, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 28000000000u},
    {7000000000u, GPUPROBE_DTYPE_TF32, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 33600000000u},
    {7000000000u, GPUPROBE_DTYPE_FP8, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 7000000000u},
    {7000000000u, GPUPROBE_DTYPE_INT8, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 8400000000u},
    {7000000000u, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 3500000000u},
    {7000000000u, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 4200000000u},
    /* int4: two per byte, rounded up */
    {0, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 0},
    {1, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 1},
    {2, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 1},
    {3, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 2},
    {4, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, 2},
    /* inference: ceil(6 * weights / 5) */
    {1, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 2}, /* w 1 -> 1.2 */
    {3, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 3}, /* w 2 -> 2.4 */
    {9, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 6}, /* w 5 -> 6 */
    {1, GPUPROBE_DTYPE_FP32, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 5}, /* 4.8 */
    {1, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 3}, /* 2.4 */
    {5, GPUPROBE_DTYPE_FP8, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 6},  /* exact */
    {1, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 10}, /* 9.6 */
    {0, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 0},
    {0, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_OK, 0},
    /* the limit */
    {MAXP, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_OK, 32 * MAXP},
    {MAXP, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_OK, MAXP / 2},
    {MAXP, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_OK, 96 * (MAXP / 10)},
    {MAXP + 1, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_ERR_OVERFLOW, 0},
    {MAXP + 1, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_ERR_OVERFLOW, 0},
    {UINT64_MAX, GPUPROBE_DTYPE_FP64, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_ERR_OVERFLOW, 0},
    /* no rule */
    {1, GPUPROBE_DTYPE_TF32, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_ERR_UNSUPPORTED, 0},
    {1, GPUPROBE_DTYPE_FP8, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_ERR_UNSUPPORTED, 0},
    {1, GPUPROBE_DTYPE_INT8, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_ERR_UNSUPPORTED, 0},
    {1, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_TRAINING, GPUPROBE_ERR_UNSUPPORTED, 0},
    /* unknown values */
    {1, (gpuprobe_dtype)8, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_ERR_INVALID_ARGUMENT, 0},
    {1, (gpuprobe_dtype)-1, GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_ERR_INVALID_ARGUMENT, 0},
    {1, GPUPROBE_DTYPE_FP16, (gpuprobe_workload)3, GPUPROBE_ERR_INVALID_ARGUMENT, 0},
    {1, GPUPROBE_DTYPE_FP16, (gpuprobe_workload)-1, GPUPROBE_ERR_INVALID_ARGUMENT, 0},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const row *r = &table[i];
        uint64_t b = UINT64_C(0xDEADBEEF);
        gpuprobe_status st = gpuprobe_capacity_bytes(r->params, r->dt, r->wl, &b);
        if (st != r->st)
            fail_msg("row %zu: status %d, want %d", i, (int)st, (int)r->st);
        if (st == GPUPROBE_OK) {
            if (b != r->bytes)
                fail_msg("row %zu: %llu bytes, want %llu", i,
                         (unsigned long long)b, (unsigned long long)r->bytes);
            /* and the inverse at the exact boundary */
            uint64_t p = 0;
            assert_int_equal(gpuprobe_capacity_params(b, r->dt, r->wl, &p),
                             GPUPROBE_OK);
            assert_true(p >= r->params);
        } else {
            assert_true(b == UINT64_C(0xDEADBEEF)); /* untouched on failure */
            /* params() answers the same for unknown / unsupported rules */
            if (st != GPUPROBE_ERR_OVERFLOW) {
                uint64_t p = 7;
                assert_int_equal(gpuprobe_capacity_params(100, r->dt, r->wl, &p),
                                 r->st);
                assert_true(p == 7);
            }
        }
    }
}

/* Known inverse values. */
static void test_params_known(void **state)
{
    (void)state;
    uint64_t p = 0;
    /* 24 GB of fp16 weights: 12 B parameters, the lesson's arithmetic */
    assert_int_equal(gpuprobe_capacity_params(24000000000u, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, &p),
                     GPUPROBE_OK);
    assert_true(p == 12000000000u);
    assert_int_equal(gpuprobe_capacity_params(24000000000u, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_INFERENCE, &p),
                     GPUPROBE_OK);
    assert_true(p == 10000000000u);
    assert_int_equal(gpuprobe_capacity_params(24000000000u, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_TRAINING, &p),
                     GPUPROBE_OK);
    assert_true(p == 1500000000u);
    /* int4: 1 byte holds 2, 2 bytes hold 4; inference 2 bytes hold 1 */
    assert_int_equal(gpuprobe_capacity_params(1, GPUPROBE_DTYPE_INT4,
                                              GPUPROBE_WORKLOAD_WEIGHTS, &p),
                     GPUPROBE_OK);
    assert_true(p == 2);
    assert_int_equal(gpuprobe_capacity_params(1, GPUPROBE_DTYPE_INT4,
                                              GPUPROBE_WORKLOAD_INFERENCE, &p),
                     GPUPROBE_OK);
    assert_true(p == 0);
    assert_int_equal(gpuprobe_capacity_params(2, GPUPROBE_DTYPE_INT4,
                                              GPUPROBE_WORKLOAD_INFERENCE, &p),
                     GPUPROBE_OK);
    assert_true(p == 2);
    /* fp32 inference: 1 param needs 5 bytes */
    assert_int_equal(gpuprobe_capacity_params(4, GPUPROBE_DTYPE_FP32,
                                              GPUPROBE_WORKLOAD_INFERENCE, &p),
                     GPUPROBE_OK);
    assert_true(p == 0);
    assert_int_equal(gpuprobe_capacity_params(5, GPUPROBE_DTYPE_FP32,
                                              GPUPROBE_WORKLOAD_INFERENCE, &p),
                     GPUPROBE_OK);
    assert_true(p == 1);
}

/* B = bytes(N), bytes(N) - 1, bytes(N) + 1 around many N, every rule. */
static void test_boundaries(void **state)
{
    (void)state;
    static const uint64_t ns[] = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 24, 25, 99, 1000, 1001,
        7000000000u, 7000000001u, UINT64_C(123456789012345),
        MAXP / 2, MAXP / 2 + 1, MAXP - 3, MAXP - 2, MAXP - 1, MAXP};
    for (int dt = 0; dt < N_DT; dt++) {
        for (int wl = 0; wl < N_WL; wl++) {
            if (!supported(dt, wl))
                continue;
            for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
                uint64_t n = ns[i], b = 0;
                check_bytes_at(n, dt, wl);
                assert_int_equal(gpuprobe_capacity_bytes(n, (gpuprobe_dtype)dt,
                                                         (gpuprobe_workload)wl, &b),
                                 GPUPROBE_OK);
                /* exactly bytes(N): at least N fit */
                uint64_t p = 0;
                assert_int_equal(gpuprobe_capacity_params(b, (gpuprobe_dtype)dt,
                                                          (gpuprobe_workload)wl, &p),
                                 GPUPROBE_OK);
                assert_true(p >= n);
                check_params_at(b, dt, wl);
                /* one byte less: fewer than N fit */
                if (b > 0) {
                    assert_int_equal(gpuprobe_capacity_params(
                                         b - 1, (gpuprobe_dtype)dt,
                                         (gpuprobe_workload)wl, &p),
                                     GPUPROBE_OK);
                    assert_true(p < n);
                    check_params_at(b - 1, dt, wl);
                }
                /* one byte more */
                check_params_at(b + 1, dt, wl);
            }
        }
    }
}

/* The round trip on seeded random values, small and large. */
static void test_random_round_trip(void **state)
{
    (void)state;
    for (int dt = 0; dt < N_DT; dt++) {
        for (int wl = 0; wl < N_WL; wl++) {
            if (!supported(dt, wl))
                continue;
            for (int k = 0; k < 2000; k++) {
                uint64_t r = rng();
                /* spread over magnitudes: small, around 10^9..10^12, large */
                uint64_t n = (k % 3 == 0)   ? r % 1000
                             : (k % 3 == 1) ? r % UINT64_C(1000000000000)
                                            : r % (MAXP + 1);
                check_bytes_at(n, dt, wl);
                uint64_t b = 0;
                gpuprobe_capacity_bytes(n, (gpuprobe_dtype)dt,
                                        (gpuprobe_workload)wl, &b);
                check_params_at(b, dt, wl);
                /* and arbitrary byte counts, including huge ones */
                uint64_t bb = (k & 1) ? rng() : rng() % UINT64_C(100000000000000000);
                check_params_at(bb, dt, wl);
            }
        }
    }
}

/* Limits: 10^15 params ok, one more overflows; huge byte counts overflow. */
static void test_limits(void **state)
{
    (void)state;
    for (int dt = 0; dt < N_DT; dt++) {
        for (int wl = 0; wl < N_WL; wl++) {
            if (!supported(dt, wl))
                continue;
            uint64_t b = 0, p = 0;
            assert_int_equal(gpuprobe_capacity_bytes(MAXP, (gpuprobe_dtype)dt,
                                                     (gpuprobe_workload)wl, &b),
                             GPUPROBE_OK);
            assert_int_equal(gpuprobe_capacity_bytes(MAXP + 1, (gpuprobe_dtype)dt,
                                                     (gpuprobe_workload)wl, &b),
                             GPUPROBE_ERR_OVERFLOW);
            assert_int_equal(gpuprobe_capacity_bytes(UINT64_MAX, (gpuprobe_dtype)dt,
                                                     (gpuprobe_workload)wl, &b),
                             GPUPROBE_ERR_OVERFLOW);
            /* UINT64_MAX bytes hold more than 10^15 of anything */
            p = 99;
            assert_int_equal(gpuprobe_capacity_params(UINT64_MAX, (gpuprobe_dtype)dt,
                                                      (gpuprobe_workload)wl, &p),
                             GPUPROBE_ERR_OVERFLOW);
            assert_true(p == 99);
            assert_int_equal(gpuprobe_capacity_params(UINT64_MAX - 1, (gpuprobe_dtype)dt,
                                                      (gpuprobe_workload)wl, &p),
                             GPUPROBE_ERR_OVERFLOW);
            assert_int_equal(gpuprobe_capacity_params(UINT64_C(1) << 63, (gpuprobe_dtype)dt,
                                                      (gpuprobe_workload)wl, &p),
                             GPUPROBE_ERR_OVERFLOW);
            /* bytes(10^15) gives exactly 10^15 back, one more byte may not */
            assert_int_equal(gpuprobe_capacity_bytes(MAXP, (gpuprobe_dtype)dt,
                                                     (gpuprobe_workload)wl, &b),
                             GPUPROBE_OK);
            check_params_at(b, dt, wl);
            check_params_at(b + 1, dt, wl);
            check_params_at(b + 64, dt, wl);
        }
    }
    /* A params() answer just above 10^15 is an overflow, not a clamp. */
    uint64_t p = 0;
    assert_int_equal(gpuprobe_capacity_params(MAXP / 2, GPUPROBE_DTYPE_INT4,
                                              GPUPROBE_WORKLOAD_WEIGHTS, &p),
                     GPUPROBE_OK);
    assert_true(p == MAXP);
    assert_int_equal(gpuprobe_capacity_params(MAXP / 2 + 1, GPUPROBE_DTYPE_INT4,
                                              GPUPROBE_WORKLOAD_WEIGHTS, &p),
                     GPUPROBE_ERR_OVERFLOW);
    assert_int_equal(gpuprobe_capacity_params(16 * MAXP + 15, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_TRAINING, &p),
                     GPUPROBE_OK);
    assert_true(p == MAXP);
    assert_int_equal(gpuprobe_capacity_params(16 * MAXP + 16, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_TRAINING, &p),
                     GPUPROBE_ERR_OVERFLOW);
}

static void test_zero_and_null(void **state)
{
    (void)state;
    for (int dt = 0; dt < N_DT; dt++) {
        for (int wl = 0; wl < N_WL; wl++) {
            uint64_t v = 5;
            gpuprobe_status want = supported(dt, wl) ? GPUPROBE_OK
                                                     : GPUPROBE_ERR_UNSUPPORTED;
            assert_int_equal(gpuprobe_capacity_bytes(0, (gpuprobe_dtype)dt,
                                                     (gpuprobe_workload)wl, &v),
                             want);
            if (want == GPUPROBE_OK)
                assert_true(v == 0);
            v = 5;
            assert_int_equal(gpuprobe_capacity_params(0, (gpuprobe_dtype)dt,
                                                      (gpuprobe_workload)wl, &v),
                             want);
            if (want == GPUPROBE_OK)
                assert_true(v == 0);
            assert_int_equal(gpuprobe_capacity_bytes(1, (gpuprobe_dtype)dt,
                                                     (gpuprobe_workload)wl, NULL),
                             GPUPROBE_ERR_INVALID_ARGUMENT);
            assert_int_equal(gpuprobe_capacity_params(1, (gpuprobe_dtype)dt,
                                                      (gpuprobe_workload)wl, NULL),
                             GPUPROBE_ERR_INVALID_ARGUMENT);
        }
    }
}

static void test_names(void **state)
{
    (void)state;
    static const char *const want[N_DT] = {"fp32", "fp64", "tf32", "fp16",
                                           "bf16", "fp8",  "int8", "int4"};
    for (int dt = 0; dt < N_DT; dt++) {
        const char *name = gpuprobe_dtype_name((gpuprobe_dtype)dt);
        assert_string_equal(name, want[dt]);
        gpuprobe_dtype back = (gpuprobe_dtype)99;
        assert_int_equal(gpuprobe_dtype_parse(name, &back), GPUPROBE_OK);
        assert_int_equal(back, dt);
    }
    assert_string_equal(gpuprobe_dtype_name((gpuprobe_dtype)8), "unknown");
    assert_string_equal(gpuprobe_dtype_name((gpuprobe_dtype)-1), "unknown");
    assert_string_equal(gpuprobe_workload_name(GPUPROBE_WORKLOAD_WEIGHTS), "weights");
    assert_string_equal(gpuprobe_workload_name(GPUPROBE_WORKLOAD_INFERENCE), "inference");
    assert_string_equal(gpuprobe_workload_name(GPUPROBE_WORKLOAD_TRAINING), "training");
    assert_string_equal(gpuprobe_workload_name((gpuprobe_workload)3), "unknown");
    assert_string_equal(gpuprobe_workload_name((gpuprobe_workload)-7), "unknown");

    static const char *const bad[] = {"", "FP16", "fp", "fp16 ", " fp16",
                                      "fp166", "unknown", "float16", "int",
                                      "fp16\n", "\xc3\xa4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpuprobe_dtype d = (gpuprobe_dtype)42;
        assert_int_equal(gpuprobe_dtype_parse(bad[i], &d),
                         GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(d, 42);
    }
    gpuprobe_dtype d;
    assert_int_equal(gpuprobe_dtype_parse(NULL, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_dtype_parse("fp16", NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    /* a long string that starts like a name */
    size_t n = 100000;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'f', n);
    memcpy(big, "fp16", 4);
    big[n] = '\0';
    assert_int_equal(gpuprobe_dtype_parse(big, &d), GPUPROBE_ERR_INVALID_ARGUMENT);
    free(big);

    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_INT4), 1);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_FP8), 2);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_INT8), 2);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_FP16), 4);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_BF16), 4);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_FP32), 8);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_TF32), 8);
    assert_int_equal(gp_dtype_half_bytes(GPUPROBE_DTYPE_FP64), 16);
    assert_int_equal(gp_dtype_half_bytes((gpuprobe_dtype)8), 0);
    assert_int_equal(gp_dtype_train_bytes((gpuprobe_dtype)8), 0);
    assert_int_equal(gp_dtype_train_bytes((gpuprobe_dtype)-1), 0);
}

/* ---- device capacity ---- */

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

static const gp_fake_cuda_device fake_devs[] = {
    /* measured context cost */
    {"Sim GPU measured", 9, 0, 80 * GiB, 70 * GiB, 600 * MiB},
    /* nothing measured: the default reserve */
    {"Sim GPU default", 8, 0, 40 * GiB, 30 * GiB, 0},
    /* less free than the reserve */
    {"Sim GPU full", 8, 6, 24 * GiB, 100 * MiB, 0},
};
static const gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, "simulated", 3,
                                  fake_devs};

static gpuprobe_context *new_ctx(const gp_fake_cuda *f)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    if (f)
        gp_test_set_cuda(ctx, f);
    return ctx;
}

static void test_device_capacity_fake_gpus(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx(&fake);
    size_t count = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &count), GPUPROBE_OK);
    assert_int_equal(count, 4);

    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    /* measured reserve */
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);
    assert_true(cap.total_bytes == 80 * GiB);
    assert_true(cap.free_bytes == 70 * GiB);
    assert_true(cap.reserve_bytes == 600 * MiB);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_MEASURED);
    /* less the allocation allowance: 80 GiB / 1024 */
    assert_true(cap.usable_bytes == 70 * GiB - 600 * MiB - 80 * MiB);
    assert_true(cap.max_params == (70 * GiB - 680 * MiB) / 2);
    assert_true(cap.usable_bytes < cap.total_bytes); /* never all of "total" */
    assert_string_equal(gpuprobe_last_error(ctx), "");

    /* default reserve, every rule consistent with capacity_params */
    for (int dt = 0; dt < N_DT; dt++) {
        for (int wl = 0; wl < N_WL; wl++) {
            gpuprobe_capacity c2 = GPUPROBE_CAPACITY_INIT;
            gpuprobe_status st = gpuprobe_device_capacity(
                ctx, 2, (gpuprobe_dtype)dt, (gpuprobe_workload)wl, 0, &c2);
            if (!supported(dt, wl)) {
                assert_int_equal(st, GPUPROBE_ERR_UNSUPPORTED);
                assert_true(c2.total_bytes == 0); /* untouched */
                assert_non_null(strstr(gpuprobe_last_error(ctx), "training"));
                continue;
            }
            assert_int_equal(st, GPUPROBE_OK);
            assert_true(c2.free_bytes == 30 * GiB);
            assert_true(c2.reserve_bytes == GPUPROBE_DEFAULT_CONTEXT_RESERVE);
            assert_int_equal(c2.reserve_source, GPUPROBE_RESERVE_DEFAULT);
            assert_true(c2.usable_bytes == /* less 40 GiB / 1024 */
                        30 * GiB - GPUPROBE_DEFAULT_CONTEXT_RESERVE - 40 * MiB);
            uint64_t p = 0;
            assert_int_equal(gpuprobe_capacity_params(c2.usable_bytes,
                                                      (gpuprobe_dtype)dt,
                                                      (gpuprobe_workload)wl, &p),
                             GPUPROBE_OK);
            assert_true(c2.max_params == p);
        }
    }

    /* free < reserve: usable 0, nothing fits */
    gpuprobe_capacity c3 = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(ctx, 3, GPUPROBE_DTYPE_INT4,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &c3),
                     GPUPROBE_OK);
    assert_true(c3.free_bytes == 100 * MiB);
    assert_true(c3.reserve_bytes == GPUPROBE_DEFAULT_CONTEXT_RESERVE);
    assert_true(c3.usable_bytes == 0);
    assert_true(c3.max_params == 0);

    /* out of range */
    gpuprobe_capacity c4 = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(ctx, 4, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &c4),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_int_equal(gpuprobe_device_capacity(ctx, SIZE_MAX, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &c4),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_true(c4.total_bytes == 0);
    gpuprobe_context_destroy(ctx);
}

/* A simulated /proc for the CPU: fixed numbers, no cgroup limit. */
static char sysroot[256];

static void write_file(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", sysroot, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void make_sysroot(void)
{
    snprintf(sysroot, sizeof sysroot, "%s/gpuprobe-capacity-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(sysroot));
    static const char *const dirs[] = {"proc", "proc/self", "sys", "sys/fs",
                                       "sys/fs/cgroup"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", sysroot, dirs[i]);
        assert_int_equal(mkdir(path, 0700), 0);
    }
    write_file("proc/meminfo", "MemTotal:       16384000 kB\n"
                               "MemFree:         1000000 kB\n"
                               "MemAvailable:    8192000 kB\n"
                               "Buffers:          100000 kB\n");
    write_file("proc/cpuinfo", "processor\t: 0\nmodel name\t: Simulated CPU\n"
                               "flags\t\t: fpu sse sse2\n\n");
    write_file("proc/self/cgroup", "0::/\n");
    write_file("sys/fs/cgroup/memory.max", "max\n");
}

static void remove_sysroot(void)
{
    static const char *const files[] = {"proc/meminfo", "proc/cpuinfo",
                                        "proc/self/cgroup",
                                        "sys/fs/cgroup/memory.max"};
    static const char *const dirs[] = {"sys/fs/cgroup", "sys/fs", "sys",
                                       "proc/self", "proc", ""};
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", sysroot, files[i]);
        unlink(path);
    }
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", sysroot, dirs[i]);
        rmdir(path);
    }
}

static void test_device_capacity_cpu_simulated(void **state)
{
    (void)state;
    make_sysroot();
    gpuprobe_context *ctx = new_ctx(NULL);
    gp_test_set_sysroot(ctx, sysroot);

    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);
    assert_true(info.available_bytes == UINT64_C(8192000) * 1024);

    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_INFERENCE, 0, &cap),
                     GPUPROBE_OK);
    assert_true(cap.total_bytes == info.total_bytes);
    assert_true(cap.free_bytes == info.available_bytes);
    assert_true(cap.reserve_bytes == 0);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_NONE);
    assert_true(cap.usable_bytes == info.available_bytes);
    uint64_t p = 0;
    assert_int_equal(gpuprobe_capacity_params(cap.usable_bytes, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_INFERENCE, &p),
                     GPUPROBE_OK);
    assert_true(cap.max_params == p);
    gpuprobe_context_destroy(ctx);
    remove_sysroot();
}

/* What one allocation can get on a GPU (since 1.2): free less the reserve,
 * rounded down to the driver's 2 MiB page, less 1/1024 of the total
 * (rounded up to a page), at least 32 MiB; nothing below zero. The CPU
 * keeps every byte. */
static void test_device_capacity_alloc_room(void **state)
{
    (void)state;
    static const gp_fake_cuda_device devs[] = {
        /* 8 GiB: the least allowance; free off the page by 1 MiB + 12345 */
        {"Sim 8 GiB", 8, 9, 8 * GiB, 7 * GiB + MiB + 12345, 0},
        /* an H200's total: 147,221,504 B / 1024 rounds up to 71 pages */
        {"Sim H200", 9, 0, UINT64_C(150754820096), UINT64_C(150754820096), 0},
        /* 64 GiB: exactly 64 MiB */
        {"Sim 64 GiB", 9, 0, 64 * GiB, 40 * GiB, 0},
        /* free above the reserve by less than the allowance: nothing */
        {"Sim tight", 8, 0, 16 * GiB, 512 * MiB + 30 * MiB, 0},
    };
    static const gp_fake_cuda fleet = {GPUPROBE_CUDA_AVAILABLE, "simulated", 4, devs};
    static const uint64_t want[] = {
        6 * GiB + 512 * MiB - 32 * MiB,
        (UINT64_C(150754820096) - 512 * MiB) / (2 * MiB) * (2 * MiB) - 71 * 2 * MiB,
        40 * GiB - 512 * MiB - 64 * MiB,
        0,
    };
    gpuprobe_context *ctx = new_ctx(&fleet);
    for (size_t i = 0; i < 4; i++) {
        gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
        assert_int_equal(gpuprobe_device_capacity(ctx, i + 1, GPUPROBE_DTYPE_INT8,
                                                  GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                         GPUPROBE_OK);
        if (cap.usable_bytes != want[i])
            fail_msg("%s: usable %llu, want %llu", devs[i].name,
                     (unsigned long long)cap.usable_bytes, (unsigned long long)want[i]);
        assert_int_equal(cap.usable_bytes % GPUPROBE_ALLOC_PAGE, 0);
        assert_true(cap.max_params == cap.usable_bytes); /* int8: a byte each */
    }
    gpuprobe_context_destroy(ctx);
}

/* The CPU's memory cannot be read (no /proc/meminfo): the capacity query
 * fails with the memory query's status and message, and writes nothing. */
static void test_device_capacity_memory_fails(void **state)
{
    (void)state;
    make_sysroot();
    char path[512];
    snprintf(path, sizeof path, "%s/proc/meminfo", sysroot);
    assert_int_equal(unlink(path), 0);
    gpuprobe_context *ctx = new_ctx(NULL);
    gp_test_set_sysroot(ctx, sysroot);
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    memset((char *)&cap + sizeof cap.size, 0x5A, sizeof cap - sizeof cap.size);
    gpuprobe_capacity untouched = cap;
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_ERR_SYSTEM);
    assert_memory_equal(&cap, &untouched, sizeof cap);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "/proc/meminfo"));
    gpuprobe_context_destroy(ctx);
    write_file("proc/meminfo", "MemTotal: 1 kB\nMemAvailable: 1 kB\n");
    remove_sysroot();
}

/* The real machine's CPU: figures move between reads, so compare loosely. */
static void test_device_capacity_cpu_real(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx(NULL);
    gpuprobe_memory_info before = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_memory_info after = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &before, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &after, 0), GPUPROBE_OK);
    assert_true(cap.total_bytes == before.total_bytes);
    assert_true(cap.reserve_bytes == 0);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_NONE);
    assert_true(cap.usable_bytes == cap.free_bytes);
    assert_true(cap.free_bytes > 0);
    assert_true(cap.free_bytes <= cap.total_bytes);
    uint64_t lo = before.available_bytes < after.available_bytes
                      ? before.available_bytes
                      : after.available_bytes;
    uint64_t hi = before.available_bytes ^ after.available_bytes ^ lo;
    /* within 10% of the band the two reads span */
    assert_true(cap.free_bytes >= lo - lo / 10);
    assert_true(cap.free_bytes <= hi + hi / 10);
    assert_true(cap.max_params == cap.usable_bytes / 2);
    gpuprobe_context_destroy(ctx);
}

static void test_device_capacity_args(void **state)
{
    (void)state;
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(NULL, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_context *ctx = new_ctx(&fake);
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    /* flags */
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 1, &cap),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "flags"));
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0x80000000u,
                                              &cap),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* unknown dtype / workload, unsupported pair */
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, (gpuprobe_dtype)8,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              (gpuprobe_workload)9, 0, &cap),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_INT8,
                                              GPUPROBE_WORKLOAD_TRAINING, 0, &cap),
                     GPUPROBE_ERR_UNSUPPORTED);
    /* size: 0, one short of the 1.0 struct */
    gpuprobe_capacity small = GPUPROBE_CAPACITY_INIT;
    small.size = 0;
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &small),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    small.size = offsetof(gpuprobe_capacity, reserve_source);
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &small),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "size"));
    assert_true(small.total_bytes == 0 && small.max_params == 0);

    /* a later, larger struct: accepted; nothing past the 1.0 fields written */
    union {
        gpuprobe_capacity cap;
        unsigned char raw[sizeof(gpuprobe_capacity) + 64];
    } big;
    memset(&big, 0xAB, sizeof big);
    big.cap.size = sizeof big;
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &big.cap),
                     GPUPROBE_OK);
    assert_true(big.cap.free_bytes == 70 * GiB);
    size_t v1_end = offsetof(gpuprobe_capacity, reserve_source) + sizeof(uint32_t);
    for (size_t i = v1_end; i < sizeof big; i++)
        assert_int_equal(big.raw[i], 0xAB);
    gpuprobe_context_destroy(ctx);
}

/* Free memory read inside this process's CUDA context already excludes the
 * context's cost: nothing more is reserved (1.0 subtracted it again). On a
 * simulated 15 GiB T4 read through the context, the fp16 capacity is exactly
 * free / 2, the CPU is unchanged, and a GPU read without a context (the
 * other fake devices) still gets its reserve. */
static void test_device_capacity_context_held(void **state)
{
    (void)state;
    static const gp_fake_cuda_device t4[] = {
        {"Sim T4", 7, 5, 15 * GiB, 14 * GiB + 700 * MiB, 300 * MiB},
        {"Sim T4 no context", 7, 5, 15 * GiB, 14 * GiB + 700 * MiB, 0},
    };
    static const gp_fake_cuda fleet = {GPUPROBE_CUDA_AVAILABLE, "simulated", 2, t4};
    gpuprobe_context *ctx = new_ctx(&fleet);
    gp_test_set_cuda_held(ctx, 0x1);

    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);
    assert_true(cap.free_bytes == 14 * GiB + 700 * MiB);
    assert_true(cap.reserve_bytes == 0);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_CONTEXT_HELD);
    /* held: no reserve, only the allowance (15 GiB / 1024 is below 32 MiB) */
    assert_true(cap.usable_bytes == cap.free_bytes - GPUPROBE_ALLOC_ALLOWANCE_MIN);
    assert_true(cap.max_params == cap.usable_bytes / 2);

    /* A fit requirement agrees: free / 2 parameters fit, one more does not,
     * and the refusal says no reserve was taken. */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    size_t dev = 0;
    const char *reason = NULL;
    req.fit_params = cap.max_params;
    assert_int_equal(gpuprobe_select(ctx, "cuda:0", &req, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_OK);
    req.fit_params = cap.max_params + 1;
    assert_int_equal(gpuprobe_select(ctx, "cuda:0", &req, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_ERR_NO_FIT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "CUDA context held"));

    /* Read without a context: the default reserve, as before. */
    assert_int_equal(gpuprobe_device_capacity(ctx, 2, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);
    assert_true(cap.reserve_bytes == GPUPROBE_DEFAULT_CONTEXT_RESERVE);
    assert_int_equal(cap.reserve_source, GPUPROBE_RESERVE_DEFAULT);
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    unsetenv("GPUPROBE_DEVICE");
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_params_known),
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_zero_and_null),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_device_capacity_fake_gpus),
        cmocka_unit_test(test_device_capacity_cpu_simulated),
        cmocka_unit_test(test_device_capacity_memory_fails),
        cmocka_unit_test(test_device_capacity_alloc_room),
        cmocka_unit_test(test_device_capacity_cpu_real),
        cmocka_unit_test(test_device_capacity_args),
        cmocka_unit_test(test_device_capacity_context_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
