/*
 * test_format.c - what the library and the commands both write for
 * people (lib/format.c): bytes and counts in decimal units rounded half up
 * in integer arithmetic, CUDA versions, the dtype lists and the SIMD words
 * of names.h.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "format.h"

typedef void (*formatter)(char *, size_t, uint64_t);

static void expect_all(formatter f, const uint64_t *v, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char buf[32];
        f(buf, sizeof buf, v[i]);
        if (strcmp(buf, want[i]) != 0)
            fail_msg("%llu as \"%s\", want \"%s\"", (unsigned long long)v[i], buf, want[i]);
    }
}

static void test_bytes(void **state)
{
    (void)state;
    static const uint64_t v[] = {
        0, 999, 1000, 1049, 1050, 1949, 12345678,
        UINT64_C(12350000000),   /* the tie: up, exactly (a double gives 12.3) */
        UINT64_C(12349999999),
        999949, 999950,          /* 999.95 kB is 1.0 MB, not 1000.0 kB */
        UINT64_C(1000000000000000000), UINT64_MAX,
    };
    static const char *const want[] = {
        "0 B", "999 B", "1.0 kB", "1.0 kB", "1.1 kB", "1.9 kB", "12.3 MB",
        "12.4 GB", "12.3 GB", "999.9 kB", "1.0 MB", "1.0 EB", "18.4 EB",
    };
    _Static_assert(sizeof v / sizeof v[0] == sizeof want / sizeof want[0], "pairs");
    expect_all(gp_format_bytes, v, want, sizeof v / sizeof v[0]);
    char small[5];
    gp_format_bytes(small, sizeof small, UINT64_C(12350000000)); /* cut, terminated */
    assert_string_equal(small, "12.4");
    gp_format_bytes(small, 0, 1); /* no room: nothing written */
    assert_string_equal(small, "12.4");
}

static void test_counts(void **state)
{
    (void)state;
    static const uint64_t v[] = {
        0, 7, 999, 1000, UINT64_C(11400000000), UINT64_C(70553706496),
        UINT64_C(1000000000000000), UINT64_C(999950000000000000),
    };
    static const char *const want[] = {
        "0", "7", "999", "1.0 K", "11.4 B", "70.6 B", "1.0 Q", "1000.0 Q",
    };
    _Static_assert(sizeof v / sizeof v[0] == sizeof want / sizeof want[0], "pairs");
    expect_all(gp_format_count, v, want, sizeof v / sizeof v[0]);
}

static void test_cuda_versions(void **state)
{
    (void)state;
    static const struct {
        int v;
        const char *want;
    } cases[] = {
        {13000, "13.0"}, {12040, "12.4"}, {12080, "12.8"}, {11020, "11.2"},
        {40990, "40.99"}, {999, "0.99"}, {1000, "1.0"}, {0, "unknown"}, {-5, "unknown"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[16];
        gp_format_cuda_version(buf, sizeof buf, cases[i].v);
        if (strcmp(buf, cases[i].want) != 0)
            fail_msg("version %d as \"%s\", want \"%s\"", cases[i].v, buf, cases[i].want);
    }
    char small[4];
    gp_format_cuda_version(small, sizeof small, 12040); /* cut, terminated */
    assert_string_equal(small, "12.");
}

static void test_dtype_lists(void **state)
{
    (void)state;
    char buf[96];
    gp_format_dtypes(buf, sizeof buf, GP_DTYPES_ALL, ", ");
    assert_string_equal(buf, "fp32, fp64, tf32, fp16, bf16, fp8, int8, int4");
    gp_format_dtypes(buf, sizeof buf, GP_DTYPES_TRAINING, " and ");
    assert_string_equal(buf, "fp32, fp64, fp16 and bf16");
    gp_format_dtypes(buf, sizeof buf, GP_DTYPES_MATMUL, " or ");
    assert_string_equal(buf, "fp32, fp64, tf32, fp16 or bf16");
    gp_format_dtypes(buf, sizeof buf, GP_DTYPES_MATMUL_CPU, " and ");
    assert_string_equal(buf, "fp32 and fp64");
    gp_format_dtypes(buf, sizeof buf, GP_DTYPES_MATMUL_GPU, " and ");
    assert_string_equal(buf, "fp32, tf32, fp16 and bf16");
    gp_format_dtypes(buf, sizeof buf, (gp_dtype_set)99, ", "); /* no such set: empty */
    assert_string_equal(buf, "");
    char small[8];
    gp_format_dtypes(small, sizeof small, GP_DTYPES_ALL, ", ");
    assert_string_equal(small, "fp32, f");
}

static void test_simd_words(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        const char *name, *label;
    } cases[] = {
        {GPUPROBE_SIMD_NONE, "none", "baseline"},
        {GPUPROBE_SIMD_SSE4_2, "sse4_2", "SSE4.2"},
        {GPUPROBE_SIMD_AVX, "avx", "AVX"},
        {GPUPROBE_SIMD_AVX2_FMA, "avx2_fma", "AVX2+FMA"},
        {GPUPROBE_SIMD_AVX512, "avx512", "AVX-512"},
        {-1, "unknown", "unknown"},
        {GPUPROBE_SIMD_AVX512 + 1, "unknown", "unknown"},
        {INT64_MAX, "unknown", "unknown"},
        {INT64_MIN, "unknown", "unknown"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(gp_simd_name(cases[i].v), cases[i].name);
        assert_string_equal(gp_simd_label(cases[i].v), cases[i].label);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_cuda_versions),
        cmocka_unit_test(test_dtype_lists),
        cmocka_unit_test(test_simd_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
