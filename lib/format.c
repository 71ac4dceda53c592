/*
 * format.c - what the library and the commands both write for people:
 * bytes and counts in decimal units, CUDA versions, dtype lists and SIMD
 * words (format.h). Self-contained (the C library, gpuprobe.h, names.h),
 * so that tools/ compiles this same file; ground floor, calls nothing of
 * the library. See docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "format.h"
#include "names.h"

#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#pragma GCC diagnostic error "-Wswitch"
#endif

/* One decimal of the largest unit (powers of 1000) that leaves at least
 * 1, rounded half up: integer arithmetic only, exact for every 64-bit
 * value. Values below 1000 are written whole, with `plain` after them. */
static void scaled(char *buf, size_t size, uint64_t v, const char *const *unit,
                   size_t nunits, const char *plain)
{
    if (size == 0)
        return;
    if (v < 1000) {
        snprintf(buf, size, "%llu%s", (unsigned long long)v, plain);
        return;
    }
    uint64_t scale = 1;
    size_t u = 0;
    while (u + 1 < nunits && v / scale >= 1000) {
        scale *= 1000;
        u++;
    }
    uint64_t step = scale / 10; /* one tenth of the unit, >= 100 */
    uint64_t tenths = v / step;
    if (v % step >= step - v % step) /* half up, without overflow */
        tenths++;
    if (tenths == 10000 && u + 1 < nunits) { /* 999.95 kB rounds to 1.0 MB */
        tenths = 10;
        u++;
    }
    snprintf(buf, size, "%llu.%llu %s", (unsigned long long)(tenths / 10),
             (unsigned long long)(tenths % 10), unit[u]);
}

void gp_format_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    scaled(buf, size, bytes, unit, sizeof unit / sizeof unit[0], " B");
}

void gp_format_count(char *buf, size_t size, uint64_t count)
{
    static const char *const unit[] = {"", "K", "M", "B", "T", "Q"};
    scaled(buf, size, count, unit, sizeof unit / sizeof unit[0], "");
}

void gp_format_cuda_version(char *buf, size_t size, int version)
{
    if (size == 0)
        return;
    if (version <= 0)
        snprintf(buf, size, "unknown");
    else
        snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
}

static const struct {
    const char *name;
    unsigned train, matmul;
} dtypes[] = {
#define GP_ROW(c, name, half, train, matmul) {name, train, matmul},
    GP_DTYPE_MAP(GP_ROW)
#undef GP_ROW
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

static int in_set(size_t i, gp_dtype_set set)
{
    switch (set) {
    case GP_DTYPES_ALL: return 1;
    case GP_DTYPES_TRAINING: return dtypes[i].train != 0;
    case GP_DTYPES_MATMUL: return dtypes[i].matmul != 0;
    case GP_DTYPES_MATMUL_CPU: return (dtypes[i].matmul & GP_MATMUL_CPU) != 0;
    case GP_DTYPES_MATMUL_GPU: return (dtypes[i].matmul & GP_MATMUL_GPU) != 0;
    }
    return 0;
}

void gp_format_dtypes(char *buf, size_t size, gp_dtype_set set, const char *last)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    size_t n = 0, total = 0;
    for (size_t i = 0; i < N_DTYPES; i++)
        total += (size_t)in_set(i, set);
    for (size_t i = 0; i < N_DTYPES; i++) {
        if (!in_set(i, set))
            continue;
        size_t used = strlen(buf);
        const char *sep = n == 0 ? "" : n + 1 == total ? last : ", ";
        snprintf(buf + used, size - used, "%s%s", sep, dtypes[i].name);
        n++;
    }
}

static const struct {
    const char *name, *label;
} simd_words[] = {
#define GP_ROW(c, name, label) [c] = {name, label},
    GP_SIMD_MAP(GP_ROW)
#undef GP_ROW
};

/* Every gpuprobe_simd constant is in the list: -Wswitch names a missing one. */
static GP_KNOWN_FN(simd_listed, gpuprobe_simd, GP_SIMD_MAP)

static int simd_known(int64_t v)
{
    return v >= 0 && v < (int64_t)(sizeof simd_words / sizeof simd_words[0]) &&
           simd_listed((gpuprobe_simd)v);
}

const char *gp_simd_name(int64_t simd)
{
    return simd_known(simd) ? simd_words[simd].name : "unknown";
}

const char *gp_simd_label(int64_t simd)
{
    return simd_known(simd) ? simd_words[simd].label : "unknown";
}
