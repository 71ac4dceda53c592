/*
 * fuzz_capacity.c - libFuzzer harness for gpuprobe_capacity_bytes() and
 * gpuprobe_capacity_params().
 *
 * Each input is decoded as: params (8 bytes LE), bytes (8 bytes LE),
 * dtype (1 byte, signed, so out-of-range and negative values occur),
 * workload (1 byte, signed). Missing bytes read as 0.
 *
 * Checked on every input, beyond "no crash, no sanitizer report":
 * - statuses are among the documented ones, outputs untouched on failure;
 * - capacity_bytes agrees with an independent oracle of the documented
 *   rules (exact integer arithmetic, rounded up to whole bytes);
 * - the documented invariant of capacity_params:
 *   bytes(params(B)) <= B < bytes(params(B) + 1), params(B) <= 10^15,
 *   and OVERFLOW exactly when the answer would exceed 10^15;
 * - monotonicity: bytes(p) <= bytes(p + 1).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "gpuprobe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static uint64_t rd64(const uint8_t *d, size_t n, size_t off)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v |= (uint64_t)(off + i < n ? d[off + i] : 0) << (8 * i);
    return v;
}

/* Storage size in half bytes per dtype (documented in gpuprobe.h). */
static int half_bytes(int dtype)
{
    switch (dtype) {
    case GPUPROBE_DTYPE_FP64: return 16;
    case GPUPROBE_DTYPE_FP32: return 8;
    case GPUPROBE_DTYPE_TF32: return 8;
    case GPUPROBE_DTYPE_FP16: return 4;
    case GPUPROBE_DTYPE_BF16: return 4;
    case GPUPROBE_DTYPE_FP8: return 2;
    case GPUPROBE_DTYPE_INT8: return 2;
    case GPUPROBE_DTYPE_INT4: return 1;
    default: return 0;
    }
}

/* The rule itself, for params <= 10^15 + 1 (every product fits 64 bits),
 * as gpuprobe.h states it: weights W = ceil(p*hb/2) (whole bytes);
 * inference ceil(6 * W / 5), the weights figure rounded first (for int4
 * and an odd count that is a byte more than ceil(1.2 * 0.5 * p));
 * training p * 16 (fp64: p * 32). */
static uint64_t raw_bytes(uint64_t params, int dtype, int workload)
{
    uint64_t hb = (uint64_t)half_bytes(dtype);
    uint64_t w = (params * hb + 1) / 2;
    switch (workload) {
    case GPUPROBE_WORKLOAD_WEIGHTS: return w;
    case GPUPROBE_WORKLOAD_INFERENCE: return (w * 6 + 4) / 5;
    default: return params * (dtype == GPUPROBE_DTYPE_FP64 ? 32u : 16u);
    }
}

/*
 * Oracle from the documentation. Returns the expected status and writes the
 * expected byte count on OK. Rules per parameter (b = storage bytes):
 * weights b, inference 1.2 b, training 16 (fp16, bf16, fp32) or 32 (fp64).
 */
static gpuprobe_status oracle_bytes(uint64_t params, int dtype, int workload,
                                    uint64_t *bytes)
{
    int hb = half_bytes(dtype);
    if (hb == 0 || workload < 0 || workload > 2)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (workload == GPUPROBE_WORKLOAD_TRAINING &&
        dtype != GPUPROBE_DTYPE_FP16 && dtype != GPUPROBE_DTYPE_BF16 &&
        dtype != GPUPROBE_DTYPE_FP32 && dtype != GPUPROBE_DTYPE_FP64)
        return GPUPROBE_ERR_UNSUPPORTED;
    if (params > GPUPROBE_MAX_PARAMS)
        return GPUPROBE_ERR_OVERFLOW;
    *bytes = raw_bytes(params, dtype, workload);
    return GPUPROBE_OK;
}

static const uint64_t SENTINEL = UINT64_C(0xdeadbeefcafef00d);

static void check_bytes(uint64_t params, int dtype, int workload)
{
    uint64_t got = SENTINEL, want = 0;
    gpuprobe_status st = gpuprobe_capacity_bytes(
        params, (gpuprobe_dtype)dtype, (gpuprobe_workload)workload, &got);
    gpuprobe_status ost = oracle_bytes(params, dtype, workload, &want);
    if (ost == GPUPROBE_ERR_INVALID_ARGUMENT ||
        ost == GPUPROBE_ERR_UNSUPPORTED) {
        /* Which of the two wins when params is also too large is not
         * documented: accept OVERFLOW there too. */
        CHECK(st == ost || (params > GPUPROBE_MAX_PARAMS &&
                            st == GPUPROBE_ERR_OVERFLOW));
    } else {
        CHECK(st == ost);
    }
    if (st != GPUPROBE_OK) {
        CHECK(got == SENTINEL);
        return;
    }
    if (got != want) {
        fprintf(stderr, "capacity_bytes(%llu, %d, %d) = %llu, expected %llu\n",
                (unsigned long long)params, dtype, workload,
                (unsigned long long)got, (unsigned long long)want);
        abort();
    }
}

static void check_params(uint64_t bytes, int dtype, int workload)
{
    uint64_t p = SENTINEL;
    gpuprobe_status st = gpuprobe_capacity_params(
        bytes, (gpuprobe_dtype)dtype, (gpuprobe_workload)workload, &p);
    uint64_t dummy;
    gpuprobe_status ost = oracle_bytes(0, dtype, workload, &dummy);
    if (ost != GPUPROBE_OK) {
        CHECK(st == ost);
        CHECK(p == SENTINEL);
        return;
    }
    uint64_t at_max = 0;
    CHECK(oracle_bytes(GPUPROBE_MAX_PARAMS, dtype, workload, &at_max) ==
          GPUPROBE_OK);
    if (st == GPUPROBE_ERR_OVERFLOW) {
        CHECK(p == SENTINEL);
        /* The answer would exceed 10^15: 10^15 + 1 parameters fit. */
        CHECK(at_max <= bytes);
        CHECK(raw_bytes(GPUPROBE_MAX_PARAMS + 1, dtype, workload) <= bytes);
        return;
    }
    CHECK(st == GPUPROBE_OK);
    CHECK(p <= GPUPROBE_MAX_PARAMS);
    /* bytes(p) <= B, through the library itself and the oracle. */
    uint64_t b0 = 0;
    CHECK(gpuprobe_capacity_bytes(p, (gpuprobe_dtype)dtype,
                                  (gpuprobe_workload)workload,
                                  &b0) == GPUPROBE_OK);
    CHECK(b0 <= bytes);
    /* B < bytes(p + 1): when p + 1 is still representable, through the
     * library; at the limit, bytes(MAX + 1) must be > B or the call should
     * have said OVERFLOW. */
    if (p == GPUPROBE_MAX_PARAMS)
        CHECK(bytes < raw_bytes(p + 1, dtype, workload));
    if (p < GPUPROBE_MAX_PARAMS) {
        uint64_t b1 = 0;
        CHECK(gpuprobe_capacity_bytes(p + 1, (gpuprobe_dtype)dtype,
                                      (gpuprobe_workload)workload,
                                      &b1) == GPUPROBE_OK);
        if (!(bytes < b1)) {
            fprintf(stderr,
                    "capacity_params(%llu, %d, %d) = %llu but bytes(%llu) = %llu "
                    "also fits\n",
                    (unsigned long long)bytes, dtype, workload,
                    (unsigned long long)p, (unsigned long long)(p + 1),
                    (unsigned long long)b1);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t params = rd64(data, size, 0);
    uint64_t bytes = rd64(data, size, 8);
    int dtype = size > 16 ? (int)(int8_t)data[16] : 0;
    int workload = size > 17 ? (int)(int8_t)data[17] : 0;
    /* Bias the values towards the interesting region around the limits. */
    int mode = size > 18 ? data[18] % 4 : 0;
    if (mode == 1) {
        params %= GPUPROBE_MAX_PARAMS + 2;
    } else if (mode == 2) {
        params = GPUPROBE_MAX_PARAMS - (params % 64) + 32;
        bytes = UINT64_C(32000000000000000) - (bytes % 4096) + 2048;
    } else if (mode == 3) {
        params %= 100000;
        bytes %= 100000;
    }

    check_bytes(params, dtype, workload);
    check_params(bytes, dtype, workload);

    /* Monotonic in params, for valid combinations. */
    if (params < GPUPROBE_MAX_PARAMS) {
        uint64_t a = 0, b = 0;
        if (gpuprobe_capacity_bytes(params, (gpuprobe_dtype)dtype,
                                    (gpuprobe_workload)workload,
                                    &a) == GPUPROBE_OK) {
            CHECK(gpuprobe_capacity_bytes(params + 1, (gpuprobe_dtype)dtype,
                                          (gpuprobe_workload)workload,
                                          &b) == GPUPROBE_OK);
            CHECK(a <= b);
        }
    }

    /* NULL output pointers never crash and are INVALID_ARGUMENT. */
    CHECK(gpuprobe_capacity_bytes(params, (gpuprobe_dtype)dtype,
                                  (gpuprobe_workload)workload,
                                  NULL) == GPUPROBE_ERR_INVALID_ARGUMENT);
    CHECK(gpuprobe_capacity_params(bytes, (gpuprobe_dtype)dtype,
                                   (gpuprobe_workload)workload,
                                   NULL) == GPUPROBE_ERR_INVALID_ARGUMENT);

    /* Name functions never return NULL, whatever the value. */
    CHECK(gpuprobe_dtype_name((gpuprobe_dtype)dtype) != NULL);
    CHECK(gpuprobe_workload_name((gpuprobe_workload)workload) != NULL);
    return 0;
}
