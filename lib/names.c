/*
 * names.c - the names and texts of the public enums, built from the lists
 * in names.h. Ground floor: calls nothing of the library.
 *
 * Each table is indexed by the constant (designated initialisers), and
 * each enum has a `known` switch built from the same list: with no
 * default label, a constant gpuprobe.h gains and the list lacks is a
 * -Wswitch error here, so the tables cannot fall out of step.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "names.h"

#include <stddef.h>
#include <string.h>

#if defined(__GNUC__)
#pragma GCC diagnostic error "-Wswitch"
#endif

#define GP_COUNT(...) +1

/* A constant's name and text; n rows of a table, indexed by value. */
typedef struct name_text {
    const char *name, *text;
} name_text;

static const char *pick(const name_text *t, int known, int v, int want_text,
                        const char *unknown)
{
    if (!known)
        return unknown;
    return want_text ? t[v].text : t[v].name;
}

/* A table of names and texts from an X(constant, name, text) list. */
#define GP_NAME_TEXT(c, name, text) [c] = {name, text},

/* ---- statuses ---- */

static const name_text status_table[] = {GP_STATUS_MAP(GP_NAME_TEXT)};
static GP_KNOWN_FN(status_known, gpuprobe_status, GP_STATUS_MAP)

const char *gpuprobe_status_string(gpuprobe_status status)
{
    return pick(status_table, status_known(status), status, 1, "unknown status");
}

const char *gpuprobe_status_name(gpuprobe_status status)
{
    return pick(status_table, status_known(status), status, 0, "unknown");
}

/* ---- CUDA causes ---- */

static const name_text cause_table[] = {GP_CUDA_CAUSE_MAP(GP_NAME_TEXT)};
static GP_KNOWN_FN(cause_known, gpuprobe_cuda_cause, GP_CUDA_CAUSE_MAP)

const char *gpuprobe_cuda_cause_string(gpuprobe_cuda_cause cause)
{
    return pick(cause_table, cause_known(cause), cause, 1, "unknown CUDA cause");
}

const char *gpuprobe_cuda_cause_name(gpuprobe_cuda_cause cause)
{
    return pick(cause_table, cause_known(cause), cause, 0, "unknown");
}

/* ---- dtypes ---- */

static const struct {
    const char *name;
    unsigned half_bytes, train_bytes, matmul;
} dtype_table[] = {
#define GP_ROW(c, name, half, train, matmul) [c] = {name, half, train, matmul},
    GP_DTYPE_MAP(GP_ROW)
#undef GP_ROW
};

enum { N_DTYPES = 0 GP_DTYPE_MAP(GP_COUNT) };
/* The dtypes are dense from 0 (the parser below walks them by value). */
_Static_assert(sizeof dtype_table / sizeof dtype_table[0] == N_DTYPES,
               "gpuprobe_dtype is dense from 0");

GP_KNOWN_FN(gp_dtype_known, gpuprobe_dtype, GP_DTYPE_MAP)

const char *gpuprobe_dtype_name(gpuprobe_dtype dtype)
{
    return gp_dtype_known(dtype) ? dtype_table[dtype].name : "unknown";
}

unsigned gp_dtype_half_bytes(gpuprobe_dtype dtype)
{
    return gp_dtype_known(dtype) ? dtype_table[dtype].half_bytes : 0;
}

unsigned gp_dtype_train_bytes(gpuprobe_dtype dtype)
{
    return gp_dtype_known(dtype) ? dtype_table[dtype].train_bytes : 0;
}

unsigned gp_dtype_matmul(gpuprobe_dtype dtype)
{
    return gp_dtype_known(dtype) ? dtype_table[dtype].matmul : 0;
}

/* The longest dtype name is 4 bytes; nothing longer can match. */
#define DTYPE_NAME_SCAN 16

gpuprobe_status gpuprobe_dtype_parse(const char *name, gpuprobe_dtype *dtype)
{
    if (!name || !dtype)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    /* Bounded: never read past the NUL, nor further than any name needs. */
    size_t len = strnlen(name, DTYPE_NAME_SCAN);
    for (unsigned i = 0; i < N_DTYPES; i++) {
        if (len == strlen(dtype_table[i].name) &&
            memcmp(name, dtype_table[i].name, len) == 0) {
            *dtype = (gpuprobe_dtype)i;
            return GPUPROBE_OK;
        }
    }
    return GPUPROBE_ERR_INVALID_ARGUMENT;
}

/* ---- workloads ---- */

static const char *const workload_table[] = {
#define GP_ROW(c, name) [c] = name,
    GP_WORKLOAD_MAP(GP_ROW)
#undef GP_ROW
};

GP_KNOWN_FN(gp_workload_known, gpuprobe_workload, GP_WORKLOAD_MAP)

const char *gpuprobe_workload_name(gpuprobe_workload workload)
{
    return gp_workload_known(workload) ? workload_table[workload] : "unknown";
}

/* ---- bandwidth tests ---- */

static const char *const bw_test_table[] = {
#define GP_ROW(c, name) [c] = name,
    GP_BANDWIDTH_TEST_MAP(GP_ROW)
#undef GP_ROW
};

_Static_assert(sizeof bw_test_table / sizeof bw_test_table[0] == GP_BW_NTESTS,
               "gpuprobe_bandwidth_test is dense from 0 and GP_BW_NTESTS counts it");

GP_KNOWN_FN(gp_bandwidth_test_known, gpuprobe_bandwidth_test, GP_BANDWIDTH_TEST_MAP)

const char *gpuprobe_bandwidth_test_name(gpuprobe_bandwidth_test test)
{
    return gp_bandwidth_test_known(test) ? bw_test_table[test] : "unknown";
}
