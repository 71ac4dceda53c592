/*
 * fuzz_options.c - libFuzzer harness for the matmul options object:
 * gpuprobe_matmul_options_create/set/get/destroy and
 * gpuprobe_matmul_param_bounds, driven by arbitrary (param, value) pairs.
 *
 * Input: a sequence of 13-byte records: op (1 byte), param (4 bytes LE,
 * signed: any enum value, known or not), value (8 bytes LE, signed).
 *
 * A shadow model of the options is kept and checked after every step:
 * - set succeeds exactly when the param is known and lower <= value <= upper
 *   (gpuprobe_matmul_param_bounds), and changes nothing when it fails;
 * - get returns the last value set, the documented default otherwise, and
 *   for N and K the effective value (M's) while they were never set;
 * - unknown params give INVALID_ARGUMENT from set, get and bounds, and no
 *   output is written.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "gpuprobe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define NPARAM 15 /* GPUPROBE_MATMUL_M .. GPUPROBE_MATMUL_WARMUP_MS */

/* Documented defaults (gpuprobe.h); N and K follow M. */
static const int64_t defaults[NPARAM] = {
    5000, 5000, 5000, GPUPROBE_DTYPE_FP32, 1, 5, 0, 250, 1, 1, 42, 0, 256, 0, 1000,
};

static const int64_t SENT = INT64_C(0x5a5a5a5a5a5a5a5a);

static int64_t rd64(const uint8_t *d)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)d[i] << (8 * i);
    return (int64_t)v;
}

static int32_t rd32(const uint8_t *d)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)d[i] << (8 * i);
    return (int32_t)v;
}

/* Map a fuzzed 32-bit value to a param: mostly known ones. */
static int pick_param(int32_t raw, uint8_t op)
{
    if (op & 0x80)
        return raw; /* anything at all, e.g. -1, 15, 999, INT32_MIN */
    return (int)((uint32_t)raw % (NPARAM + 2)); /* 15 and 16 are unknown */
}

typedef struct model {
    int set[NPARAM];
    int64_t value[NPARAM];
} model;

static int64_t expected(const model *m, int p)
{
    if (m->set[p])
        return m->value[p];
    if (p == GPUPROBE_MATMUL_N || p == GPUPROBE_MATMUL_K)
        return m->set[GPUPROBE_MATMUL_M] ? m->value[GPUPROBE_MATMUL_M]
                                         : defaults[GPUPROBE_MATMUL_M];
    return defaults[p];
}

static void check_all(const gpuprobe_matmul_options *o, const model *m)
{
    for (int p = 0; p < NPARAM; p++) {
        int64_t v = SENT;
        CHECK(gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)p, &v) ==
              GPUPROBE_OK);
        if (v != expected(m, p)) {
            fprintf(stderr, "param %d: get %lld, expected %lld\n", p,
                    (long long)v, (long long)expected(m, p));
            abort();
        }
    }
}

static void check_bounds_sane(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    for (int p = 0; p < NPARAM; p++) {
        int64_t lo = SENT, hi = SENT;
        CHECK(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)p, &lo,
                                           &hi) == GPUPROBE_OK);
        CHECK(lo <= hi);
        /* Every documented default is accepted. */
        CHECK(lo <= defaults[p] && defaults[p] <= hi);
    }
}

static void step(gpuprobe_matmul_options *o, model *m, uint8_t op, int param,
                 int64_t value)
{
    int known = param >= 0 && param < NPARAM;
    int64_t lo = SENT, hi = SENT;
    gpuprobe_status bst =
        gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)param, &lo, &hi);
    if (!known) {
        CHECK(bst == GPUPROBE_ERR_INVALID_ARGUMENT);
        CHECK(lo == SENT && hi == SENT);
    } else {
        CHECK(bst == GPUPROBE_OK);
        CHECK(lo <= hi);
    }

    switch (op & 0x7) {
    case 0: case 1: case 2: case 3: { /* set; bias values to the bounds */
        if (known) {
            uint64_t r = (uint64_t)value;
            switch (op & 0x3) {
            case 1: /* lo - 1, lo or lo + 1 */
                value = (r % 3 == 0 && lo > INT64_MIN) ? lo - 1
                        : (r % 3 == 2 && lo < INT64_MAX) ? lo + 1 : lo;
                break;
            case 2: /* hi - 1, hi or hi + 1 */
                value = (r % 3 == 0 && hi > INT64_MIN) ? hi - 1
                        : (r % 3 == 2 && hi < INT64_MAX) ? hi + 1 : hi;
                break;
            case 3: /* anywhere inside */
                value = (int64_t)((uint64_t)lo +
                                  r % ((uint64_t)hi - (uint64_t)lo + 1 == 0
                                           ? UINT64_MAX
                                           : (uint64_t)hi - (uint64_t)lo + 1));
                break;
            default: break;
            }
        }
        gpuprobe_status st =
            gpuprobe_matmul_options_set(o, (gpuprobe_matmul_param)param, value);
        if (known && lo <= value && value <= hi) {
            if (st != GPUPROBE_OK) {
                fprintf(stderr, "set(%d, %lld) in [%lld, %lld] gave %s\n",
                        param, (long long)value, (long long)lo, (long long)hi,
                        gpuprobe_status_name(st));
                abort();
            }
            m->set[param] = 1;
            m->value[param] = value;
        } else {
            CHECK(st == GPUPROBE_ERR_INVALID_ARGUMENT);
        }
        break;
    }
    case 4: { /* get */
        int64_t v = SENT;
        gpuprobe_status st =
            gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)param, &v);
        if (known) {
            CHECK(st == GPUPROBE_OK);
            CHECK(v == expected(m, param));
        } else {
            CHECK(st == GPUPROBE_ERR_INVALID_ARGUMENT);
            CHECK(v == SENT);
        }
        break;
    }
    case 5: /* NULL arguments */
        CHECK(gpuprobe_matmul_options_set(NULL, (gpuprobe_matmul_param)param,
                                          value) ==
              GPUPROBE_ERR_INVALID_ARGUMENT);
        CHECK(gpuprobe_matmul_options_get(o, (gpuprobe_matmul_param)param,
                                          NULL) ==
              GPUPROBE_ERR_INVALID_ARGUMENT);
        CHECK(gpuprobe_matmul_options_get(NULL, (gpuprobe_matmul_param)param,
                                          &value) ==
              GPUPROBE_ERR_INVALID_ARGUMENT);
        CHECK(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)param, NULL,
                                           NULL) ==
              GPUPROBE_ERR_INVALID_ARGUMENT);
        CHECK(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)param, NULL,
                                           &hi) ==
              GPUPROBE_ERR_INVALID_ARGUMENT);
        CHECK(gpuprobe_matmul_param_bounds((gpuprobe_matmul_param)param, &lo,
                                           NULL) ==
              GPUPROBE_ERR_INVALID_ARGUMENT);
        break;
    default: /* full check */
        check_all(o, m);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_bounds_sane();
    gpuprobe_matmul_options *o = NULL;
    CHECK(gpuprobe_matmul_options_create(&o) == GPUPROBE_OK && o != NULL);
    model m;
    memset(&m, 0, sizeof m);
    check_all(o, &m);
    for (size_t off = 0; off + 13 <= size; off += 13) {
        uint8_t op = data[off];
        int param = pick_param(rd32(data + off + 1), op);
        step(o, &m, op, param, rd64(data + off + 5));
    }
    check_all(o, &m);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_matmul_options_destroy(NULL);
    return 0;
}
