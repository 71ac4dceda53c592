/*
 * fuzz_spec.c - libFuzzer harness for device-spec parsing (gp_parse_spec)
 * and gpuprobe_select() with GPUPROBE_SELECT_IGNORE_ENV, on a context that
 * carries a simulated set of three CUDA devices (gp_test_set_cuda).
 *
 * Input: byte 0 chooses flags and how the requirements struct is built
 * (none, full, undersized, zero size); bytes 1..32 fill the requirements;
 * the rest is the spec (NUL-terminated heap copy, any bytes).
 *
 * Checked beyond "no crash, no sanitizer report":
 * - gp_parse_spec accepts every canonical spec with the right kind/index,
 *   and select agrees with it (a spec it rejects is INVALID_ARGUMENT in
 *   select, `cpu` gives device 0, `cuda:N` device N + 1 or NOT_FOUND);
 * - statuses are the documented ones, a failure leaves a message and does
 *   not write the output, a success gives a device in range and a reason;
 * - the chosen device meets the requirements (free memory, compute
 *   capability) that the fake devices make checkable;
 * - unknown flag bits are INVALID_ARGUMENT.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define GiB (UINT64_C(1) << 30)

/* cuda:0 and cuda:2 tie on free memory below cuda:1; `auto` picks cuda:1. */
static const gp_fake_cuda_device fake_devices[] = {
    {"Fake A100", 8, 0, 80 * GiB, 60 * GiB, 0},
    {"Fake H100", 9, 0, 80 * GiB, 75 * GiB, 500u << 20},
    {"Fake T4", 7, 5, 16 * GiB, 60 * GiB, 0},
};
static const gp_fake_cuda fake = {
    GPUPROBE_CUDA_AVAILABLE, "3 fake devices", 3, fake_devices,
};
#define NFAKE 3

static gpuprobe_context *ctx;

static void cleanup(void) { gpuprobe_context_destroy(ctx); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    CHECK(gpuprobe_context_create(&ctx, 0) == GPUPROBE_OK);
    gp_test_set_cuda(ctx, &fake);
    size_t n = 0;
    CHECK(gpuprobe_device_count(ctx, &n) == GPUPROBE_OK);
    CHECK(n == 1 + NFAKE);
    atexit(cleanup);
    return 0;
}

static uint64_t rd64(const uint8_t *d)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)d[i] << (8 * i);
    return v;
}

/* The canonical forms of the grammar, with a value of N small enough to be
 * an ordinal (no sign, no leading zero, at most 9 digits). -1: not one. */
static int canonical(const char *s, gp_spec_kind *kind, int *index)
{
    if (strcmp(s, "auto") == 0) { *kind = GP_SPEC_AUTO; return 0; }
    if (strcmp(s, "cpu") == 0) { *kind = GP_SPEC_CPU; return 0; }
    if (strcmp(s, "cuda") == 0) { *kind = GP_SPEC_CUDA; return 0; }
    if (strncmp(s, "cuda:", 5) != 0)
        return -1;
    const char *d = s + 5;
    size_t n = strlen(d);
    if (n == 0 || n > 9 || (d[0] == '0' && n > 1))
        return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i] < '0' || d[i] > '9')
            return -1;
        v = v * 10 + (d[i] - '0');
    }
    *kind = GP_SPEC_CUDA_N;
    *index = v;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    uint8_t req_bytes[32] = {0};
    size_t nreq = size - 1 < 32 ? size - 1 : 32;
    memcpy(req_bytes, data + 1, nreq);
    size_t off = 1 + nreq;
    /* Sometimes use the whole input as the spec, to reach short specs. */
    if (mode & 0x40)
        off = 1;
    char *spec = malloc(size - off + 1);
    CHECK(spec != NULL);
    memcpy(spec, data + off, size - off);
    spec[size - off] = '\0';

    /* ---- parser ---- */
    gp_spec_kind kind = (gp_spec_kind)77, ckind;
    int index = -77, cindex = -1;
    gpuprobe_status pst = gp_parse_spec(ctx, spec, &kind, &index);
    CHECK(pst == GPUPROBE_OK || pst == GPUPROBE_ERR_INVALID_ARGUMENT);
    if (pst == GPUPROBE_OK) {
        CHECK(kind >= GP_SPEC_AUTO && kind <= GP_SPEC_CUDA_N);
        if (kind == GP_SPEC_CUDA_N)
            CHECK(index >= 0);
    } else {
        CHECK(gpuprobe_last_error(ctx)[0] != '\0');
    }
    if (canonical(spec, &ckind, &cindex) == 0) {
        CHECK(pst == GPUPROBE_OK);
        CHECK(kind == ckind);
        if (ckind == GP_SPEC_CUDA_N)
            CHECK(index == cindex);
    }

    /* ---- requirements ---- */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    const gpuprobe_requirements *reqp = NULL;
    int req_kind = (mode >> 2) & 3; /* 0 none, 1 full, 2 undersized, 3 zero */
    if (req_kind != 0) {
        req.min_free_bytes = rd64(req_bytes) % (100 * GiB);
        if (req_bytes[8] & 1)
            req.min_free_bytes = 0;
        req.min_cc_major = (int32_t)(req_bytes[9] % 12) - 1;
        req.min_cc_minor = (int32_t)(req_bytes[10] % 10);
        if (req_bytes[11] & 1) {
            req.min_cc_major = 0;
            req.min_cc_minor = 0;
        }
        req.fit_params = rd64(req_bytes + 12);
        if (req_bytes[20] & 3)
            req.fit_params %= UINT64_C(100000000000);
        if (req_bytes[20] & 4)
            req.fit_params = 0;
        req.fit_dtype = (int32_t)(int8_t)req_bytes[21];
        if (req_bytes[22] & 1)
            req.fit_dtype %= 8;
        req.fit_workload = (int32_t)(int8_t)req_bytes[23];
        if (req_bytes[24] & 1)
            req.fit_workload %= 3;
        if (req_kind == 2)
            req.size = offsetof(gpuprobe_requirements, min_cc_major);
        if (req_kind == 3)
            req.size = 0;
        reqp = &req;
    }

    /* ---- select ---- */
    unsigned flags = GPUPROBE_SELECT_IGNORE_ENV;
    if ((mode & 0x3) == 3)
        flags |= (unsigned)req_bytes[25] << 1 | 0x2u; /* some unknown bit */
    size_t dev = 12345;
    const char *reason = NULL;
    gpuprobe_status st = gpuprobe_select(ctx, spec, reqp, flags, &dev, &reason);
    switch (st) {
    case GPUPROBE_OK:
    case GPUPROBE_ERR_INVALID_ARGUMENT:
    case GPUPROBE_ERR_CUDA_UNAVAILABLE:
    case GPUPROBE_ERR_NOT_FOUND:
    case GPUPROBE_ERR_NO_FIT:
    case GPUPROBE_ERR_UNSUPPORTED: /* fit_dtype/workload with no rule */
    case GPUPROBE_ERR_OVERFLOW:    /* fit_params > 10^15 */
    case GPUPROBE_ERR_SYSTEM:      /* host memory could not be read */
        break;
    default:
        fprintf(stderr, "select(\"%s\") returned %s\n", spec,
                gpuprobe_status_name(st));
        abort();
    }
    if (flags & ~GPUPROBE_SELECT_IGNORE_ENV)
        CHECK(st == GPUPROBE_ERR_INVALID_ARGUMENT);
    if (req_kind == 3)
        CHECK(st == GPUPROBE_ERR_INVALID_ARGUMENT);
    /* A malformed spec is INVALID_ARGUMENT (when nothing else is wrong:
     * which of two errors wins is not documented). */
    if (pst != GPUPROBE_OK && !reqp)
        CHECK(st == GPUPROBE_ERR_INVALID_ARGUMENT);

    if (st != GPUPROBE_OK) {
        CHECK(dev == 12345);
        CHECK(gpuprobe_last_error(ctx)[0] != '\0');
    } else {
        CHECK(pst == GPUPROBE_OK);
        CHECK(dev <= NFAKE);
        CHECK(reason != NULL && reason[0] != '\0');
        CHECK(gpuprobe_last_error(ctx)[0] == '\0');
        if (kind == GP_SPEC_CPU)
            CHECK(dev == 0);
        if (kind == GP_SPEC_CUDA)
            CHECK(dev >= 1);
        if (kind == GP_SPEC_CUDA_N)
            CHECK(dev == (size_t)index + 1);
        int full = req_kind == 1;
        if (dev >= 1) {
            const gp_fake_cuda_device *f = &fake_devices[dev - 1];
            if (full)
                CHECK(f->free_bytes >= req.min_free_bytes);
            if (full && req.min_cc_major > 0)
                CHECK(f->cc_major > req.min_cc_major ||
                      (f->cc_major == req.min_cc_major &&
                       f->cc_minor >= req.min_cc_minor));
        } else if (full) {
            CHECK(req.min_cc_major <= 0);
        }
        /* `auto` and `cuda` without requirements: most free memory, ties
         * to the lowest ordinal, i.e. cuda:1. */
        if ((kind == GP_SPEC_AUTO || kind == GP_SPEC_CUDA) && !reqp)
            CHECK(dev == 2);
    }
    if (pst == GPUPROBE_OK && kind == GP_SPEC_CUDA_N && index >= NFAKE &&
        !reqp && !(flags & ~GPUPROBE_SELECT_IGNORE_ENV))
        CHECK(st == GPUPROBE_ERR_NOT_FOUND);
    if (pst == GPUPROBE_OK && !reqp &&
        !(flags & ~GPUPROBE_SELECT_IGNORE_ENV) && kind != GP_SPEC_CUDA_N)
        CHECK(st == GPUPROBE_OK);

    /* NULL spec and NULL device are INVALID_ARGUMENT, never a crash. */
    CHECK(gpuprobe_select(ctx, NULL, NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev,
                          NULL) == GPUPROBE_ERR_INVALID_ARGUMENT);
    CHECK(gpuprobe_select(ctx, spec, NULL, GPUPROBE_SELECT_IGNORE_ENV, NULL,
                          NULL) == GPUPROBE_ERR_INVALID_ARGUMENT);
    free(spec);
    return 0;
}
