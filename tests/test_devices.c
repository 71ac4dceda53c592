/*
 * test_devices.c - enumeration, the CPU device, attributes and their errors,
 * simulated CUDA devices (test seam), SIMD detection.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "unit_check.h"
#include "sysroot_util.h"

/* ---- the CPU ---- */

static void test_cpu_device(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_true(n >= 1);

    int64_t v = -1;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_KIND, &v), GPUPROBE_OK);
    assert_int_equal(v, GPUPROBE_DEVICE_CPU);

    const char *s = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &s), GPUPROBE_OK);
    assert_non_null(s);
    assert_true(strlen(s) > 0);
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_SPEC, &s), GPUPROBE_OK);
    assert_string_equal(s, "cpu");

    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_LOGICAL_CORES, &v),
                     GPUPROBE_OK);
    assert_int_equal(v, sysconf(_SC_NPROCESSORS_ONLN));

    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_SIMD, &v), GPUPROBE_OK);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    int expect = GPUPROBE_SIMD_NONE;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        expect = __builtin_cpu_supports("avx512f") ? GPUPROBE_SIMD_AVX512
                                                   : GPUPROBE_SIMD_AVX2_FMA;
    else if (__builtin_cpu_supports("avx"))
        expect = GPUPROBE_SIMD_AVX;
    else if (__builtin_cpu_supports("sse4.2"))
        expect = GPUPROBE_SIMD_SSE4_2;
    assert_int_equal(v, expect);
#else
    assert_int_equal(v, GPUPROBE_SIMD_NONE);
#endif

    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &s),
                     GPUPROBE_OK);
    assert_true(strlen(s) > 0);
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CONFIG, &s),
                     GPUPROBE_OK);
    assert_true(strlen(s) > 0);
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &v),
                     GPUPROBE_OK);
    assert_true(v >= 1);

    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_TOTAL_MEMORY, &v),
                     GPUPROBE_OK);
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    double phys = (double)pages * (double)psz;
    assert_true((double)v > phys * 0.9 && (double)v < phys * 1.1);

    /* the clock is either known and plausible, or reported unsupported */
    gpuprobe_status st = gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_CLOCK_KHZ, &v);
    if (st == GPUPROBE_OK)
        assert_true(v >= 100000 && v <= 10000000);
    else
        assert_int_equal(st, GPUPROBE_ERR_UNSUPPORTED);
    gpuprobe_context_destroy(ctx);
}

static void test_cpu_describe_fake_sysroot(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-dev-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\n"
        "model name\t: Test CPU @ 3.00GHz   \n"
        "cpu MHz\t\t: 1234.567\n"
        "flags\t\t: fpu sse sse2 sse4_1 sse4_2 avx avx2 fma avx512f\n\n"
        "processor\t: 1\nmodel name\t: Other name\n");
    sr_put(root, "proc/meminfo", "MemTotal:  1000 kB\nMemAvailable: 500 kB\n");
    gp_device cpu;
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_string_equal(cpu.name, "Test CPU @ 3.00GHz");
    assert_int_equal(cpu.simd, GPUPROBE_SIMD_AVX512);
    assert_int_equal(cpu.clock_khz, 1234567);
    assert_int_equal(cpu.total_memory, 1024000);
    assert_string_equal(cpu.spec, "cpu");

    /* cpufreq's maximum wins over cpuinfo's current MHz */
    sr_put(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_int_equal(cpu.clock_khz, 3500000);
    /* Reads that succeed are successes whatever errno held before (it
     * counts only after a failed read). */
    errno = ENOMEM;
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_int_equal(cpu.clock_khz, 3500000);
    assert_int_equal(cpu.total_memory, 1024000);

    /* an over-long model name is truncated, NUL-terminated */
    char big[4096 + 64];
    memcpy(big, "model name\t: ", 13);
    memset(big + 13, 'X', 4096);
    strcpy(big + 13 + 4096, "\n");
    sr_put(root, "proc/cpuinfo", big);
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_int_equal(strlen(cpu.name), GP_NAME_LEN - 1);
    assert_int_equal(cpu.simd, GPUPROBE_SIMD_NONE);

    /* nothing readable: the machine's architecture as the name ("x86_64
     * CPU", from uname), clock unknown */
    sr_put(root, "proc/cpuinfo", "garbage without colons\n\n\n");
    unlink(strcat(strcpy(big, root), "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"));
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    struct utsname u;
    assert_int_equal(uname(&u), 0);
    char want[GP_NAME_LEN];
    snprintf(want, sizeof want, "%.64s CPU", u.machine);
    assert_string_equal(cpu.name, want);
    assert_int_equal(cpu.clock_khz, 0);
    sr_rm_tree(root);
}

static void test_cpu_clock_unsupported_via_sysroot(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-dev-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/cpuinfo", "model name : Clockless\nflags : sse4_2\n");
    sr_put(root, "proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    int64_t v;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_CLOCK_KHZ, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "CLOCK_KHZ"));
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_SIMD, &v), GPUPROBE_OK);
    assert_int_equal(v, GPUPROBE_SIMD_SSE4_2);
    const char *s;
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &s), GPUPROBE_OK);
    assert_string_equal(s, "Clockless");
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* /proc/cpuinfo as the kernel may write it: lines longer than the reader's
 * buffer, several processor blocks, out-of-range figures, the model name
 * under the keys of other architectures. */
static void test_cpuinfo_edges(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-dev-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
    gp_device cpu;

    /* A line longer than 8191 bytes is skipped whole: its tail is not read
     * as a line of its own, not even from its second byte. */
    static char text[8192 + 256];
    memset(text, 'a', 8191);
    strcpy(text + 8191, "Xmodel name : Tail Of A Long Line\nmodel name : Right\n"
                        "flags : avx\ncpu MHz : 1500.0\n");
    sr_put(root, "proc/cpuinfo", text);
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_string_equal(cpu.name, "Right");
    assert_int_equal(cpu.simd, GPUPROBE_SIMD_AVX);
    assert_int_equal(cpu.clock_khz, 1500000);

    /* A line of exactly 8191 bytes with its newline fits the buffer: it is
     * read, and the next line too. */
    static const char head[] = "flags : avx ";
    memset(text, 0, sizeof text);
    memcpy(text, head, sizeof head - 1);
    memset(text + sizeof head - 1, 'b', 8190 - (sizeof head - 1));
    strcpy(text + 8190, "\nmodel name : Next\n");
    sr_put(root, "proc/cpuinfo", text);
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_string_equal(cpu.name, "Next");
    assert_int_equal(cpu.simd, GPUPROBE_SIMD_AVX);

    /* The first processor's figures count; a one-letter name is a name. */
    sr_put(root, "proc/cpuinfo",
           "processor : 0\nmodel name : X\nflags : sse4_2\ncpu MHz : 1000.000\n\n"
           "processor : 1\nmodel name : Y\nflags : avx2 fma\ncpu MHz : 3000.000\n");
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_string_equal(cpu.name, "X");
    assert_int_equal(cpu.simd, GPUPROBE_SIMD_SSE4_2);
    assert_int_equal(cpu.clock_khz, 1000000);

    /* a value right after the colon, with no space */
    sr_put(root, "proc/cpuinfo", "model name:Zen\ncpu MHz:1500\n");
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_string_equal(cpu.name, "Zen");
    assert_int_equal(cpu.clock_khz, 1500000);

    /* a first CPU whose clock reads 0 (some hypervisors) does not hide
     * the next one's */
    sr_put(root, "proc/cpuinfo", "model name : M\ncpu MHz : 0.000\n\n"
                                 "model name : M\ncpu MHz : 2400.000\n");
    assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
    assert_int_equal(cpu.clock_khz, 2400000);

    /* cpu MHz must be in (0, 10^6) */
    static const struct {
        const char *mhz;
        int64_t khz;
    } mhz[] = {{"0", 0}, {"-5", 0}, {"1000000", 0}, {"999999.5", 999999500},
               {"0.001", 1}, {"fast", 0}};
    for (size_t i = 0; i < sizeof mhz / sizeof mhz[0]; i++) {
        char info[128];
        snprintf(info, sizeof info, "model name : M\ncpu MHz : %s\n", mhz[i].mhz);
        sr_put(root, "proc/cpuinfo", info);
        assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
        if (cpu.clock_khz != mhz[i].khz)
            fail_msg("cpu MHz \"%s\": %lld kHz, want %lld", mhz[i].mhz,
                     (long long)cpu.clock_khz, (long long)mhz[i].khz);
    }

    /* cpufreq's maximum must be in (0, 2^40) kHz, else cpu MHz counts */
    sr_put(root, "proc/cpuinfo", "model name : M\ncpu MHz : 1500.0\n");
    static const struct {
        const char *khz;
        int64_t want;
    } freq[] = {{"0", 1500000}, {"1099511627776", 1500000}, {"1099511627775", 1099511627775},
                {"max", 1500000}, {"2400000", 2400000}};
    for (size_t i = 0; i < sizeof freq / sizeof freq[0]; i++) {
        sr_put(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", freq[i].khz);
        assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
        if (cpu.clock_khz != freq[i].want)
            fail_msg("cpuinfo_max_freq \"%s\": %lld kHz, want %lld", freq[i].khz,
                     (long long)cpu.clock_khz, (long long)freq[i].want);
    }

    /* Model-name keys, best first: "model name", "Processor", "cpu model",
     * "cpu", "Hardware"; a later line with a better key wins. */
    static const struct {
        const char *info, *name;
    } keys[] = {
        {"Hardware : H\ncpu : C\n", "C"},
        {"cpu : C\ncpu model : CM\n", "CM"},
        {"cpu model : CM\nProcessor : P\ncpu : C\n", "P"},
        {"Processor : P\nmodel name : MN\nHardware : H\n", "MN"},
        {"Hardware : H\n", "H"},
        {"Hardware :\ncpu : C\n", "C"}, /* an empty value is no name */
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        sr_put(root, "proc/cpuinfo", keys[i].info);
        assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
        assert_string_equal(cpu.name, keys[i].name);
    }
    sr_rm_tree(root);
}

/* mkdir -p a directory whose path is exactly `len` bytes long under base. */
static void make_long_dir(char *out, const char *base, size_t len)
{
    size_t n = (size_t)snprintf(out, GP_PATH_LEN, "%s", base);
    while (n < len) {
        size_t part = len - n - 1 < 200 ? len - n - 1 : 200;
        if (len - n - 1 - part > 0 && len - n - 1 - part < 2)
            part -= 2; /* never leave a component too short to make */
        out[n++] = '/';
        memset(out + n, 'd', part);
        n += part;
        out[n] = '\0';
        assert_int_equal(mkdir(out, 0700), 0);
    }
    assert_int_equal(strlen(out), len);
}

/* A sysroot so long that "<sysroot>/proc/cpuinfo" does not fit a path: the
 * read is refused, never made from the truncated path (which names another
 * file here); one byte shorter, it is made. */
static void test_sysroot_too_long(void **state)
{
    (void)state;
    char base[] = "/tmp/gpuprobe-dev-XXXXXX";
    assert_non_null(mkdtemp(base));
    static char root[GP_PATH_LEN], path[GP_PATH_LEN];
    size_t tail = strlen("/proc/cpuinfo"); /* as long as "/proc/meminfo" */
    for (size_t len = GP_PATH_LEN - tail - 1; len <= GP_PATH_LEN - tail; len++) {
        char sub[64];
        snprintf(sub, sizeof sub, "%s/%zu", base, len);
        assert_int_equal(mkdir(sub, 0700), 0);
        make_long_dir(root, sub, len);
        assert_true(snprintf(path, sizeof path, "%s/proc", root) < (int)sizeof path);
        assert_int_equal(mkdir(path, 0700), 0);
        int fits = len + tail < GP_PATH_LEN;
        /* the full names when they fit, the names cut by one byte when not */
        const char *cpuinfo = fits ? "cpuinfo" : "cpuinf";
        const char *meminfo = fits ? "meminfo" : "meminf";
        assert_true(snprintf(path, sizeof path, "%s/proc/%s", root, cpuinfo) < (int)sizeof path);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("model name : From The Sysroot\n", f);
        fclose(f);
        assert_true(snprintf(path, sizeof path, "%s/proc/%s", root, meminfo) < (int)sizeof path);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("MemTotal: 3 kB\nMemAvailable: 1 kB\n", f);
        fclose(f);

        gp_device cpu;
        assert_int_equal(gp_cpu_describe(&cpu, root), GPUPROBE_OK);
        char buf[64];
        errno = 0;
        int r = gp_read_file(root, "/proc/meminfo", buf, sizeof buf);
        if (fits) {
            assert_string_equal(cpu.name, "From The Sysroot");
            assert_int_equal(cpu.total_memory, 3072);
            assert_int_equal(r, 0);
        } else {
            assert_string_not_equal(cpu.name, "From The Sysroot");
            /* the physical memory from sysconf instead */
            assert_int_equal(cpu.total_memory, (uint64_t)sysconf(_SC_PHYS_PAGES) *
                                                   (uint64_t)sysconf(_SC_PAGESIZE));
            assert_int_equal(r, -1);
            assert_int_equal(errno, ENAMETOOLONG);
        }
    }
    sr_rm_tree(base);
}

/* ---- bad inputs ---- */

static void test_bad_inputs(void **state)
{
    (void)state;
    int64_t v;
    const char *s;
    size_t n;
    assert_int_equal(gpuprobe_device_count(NULL, &n), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_get_int(NULL, 0, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_get_string(NULL, 0, GPUPROBE_ATTR_NAME, &s),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_cuda_cause cause;
    int ver;
    assert_int_equal(gpuprobe_cuda_status(NULL, &cause, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_cuda_driver_version(NULL, &ver), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_cuda_runtime_version(NULL, &ver), GPUPROBE_ERR_INVALID_ARGUMENT);

    gpuprobe_context *ctx = new_ctx();
    assert_int_equal(gpuprobe_device_count(ctx, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "count"));
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_KIND, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_cuda_status(ctx, NULL, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);

    /* index out of range */
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    v = 12345;
    assert_int_equal(gpuprobe_device_get_int(ctx, n, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_int_equal(v, 12345); /* untouched on failure */
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    assert_int_equal(gpuprobe_device_get_string(ctx, (size_t)-1, GPUPROBE_ATTR_NAME, &s),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);

    /* wrong type */
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_NAME, &v),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "string"));
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_KIND, &s),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "integer"));

    /* unknown attribute */
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, (gpuprobe_attr)999, &v),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "999"));
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, (gpuprobe_attr)-1, &s),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, (gpuprobe_attr)36, &v),
                     GPUPROBE_ERR_INVALID_ARGUMENT);

    /* CUDA-only attribute on the CPU */
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_CC_MAJOR, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "CC_MAJOR"));
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_UUID, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_CUDA_INDEX, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    gpuprobe_context_destroy(ctx);
}

/* ---- simulated CUDA devices ---- */

static const gp_fake_cuda_device fake_devs[] = {
    {"Fake GPU A", 8, 6, UINT64_C(24) << 30, UINT64_C(20) << 30, 0},
    {"Fake GPU B", 9, 0, UINT64_C(80) << 30, UINT64_C(79) << 30, UINT64_C(500) << 20},
};

static void test_fake_cuda_devices(void **state)
{
    (void)state;
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 2, fake_devs};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &fake);
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 3);

    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_int_equal(cause, GPUPROBE_CUDA_AVAILABLE);
    assert_non_null(detail);

    int64_t v;
    const char *s;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_KIND, &v), GPUPROBE_OK);
    assert_int_equal(v, GPUPROBE_DEVICE_CPU);
    for (size_t i = 1; i <= 2; i++) {
        const gp_fake_cuda_device *f = &fake_devs[i - 1];
        assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_KIND, &v), GPUPROBE_OK);
        assert_int_equal(v, GPUPROBE_DEVICE_CUDA);
        assert_int_equal(gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &s), GPUPROBE_OK);
        assert_string_equal(s, f->name);
        assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MAJOR, &v), GPUPROBE_OK);
        assert_int_equal(v, f->cc_major);
        assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MINOR, &v), GPUPROBE_OK);
        assert_int_equal(v, f->cc_minor);
        assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY, &v),
                         GPUPROBE_OK);
        assert_int_equal((uint64_t)v, f->total_bytes);
        assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CUDA_INDEX, &v),
                         GPUPROBE_OK);
        assert_int_equal(v, (int64_t)i - 1);
        assert_int_equal(gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_UUID, &s), GPUPROBE_OK);
        assert_int_equal(strlen(s), 40);
        assert_memory_equal(s, "GPU-", 4);
        assert_int_equal(gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_PCI_BUS_ID, &s),
                         GPUPROBE_OK);
        assert_int_equal(strlen(s), 12);
    }
    assert_int_equal(gpuprobe_device_get_string(ctx, 2, GPUPROBE_ATTR_SPEC, &s), GPUPROBE_OK);
    assert_string_equal(s, "cuda:1");

    /* CPU-only attributes on a CUDA device */
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_LOGICAL_CORES, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "LOGICAL_CORES"));
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_BLAS_CORE, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_SIMD, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    /* unknown on a simulated device */
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_MULTIPROCESSORS, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(gpuprobe_device_get_int(ctx, 3, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_NOT_FOUND);

    /* back to real enumeration */
    gp_test_set_cuda(ctx, NULL);
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_true(n >= 1);
    gpuprobe_context_destroy(ctx);
}

/* NUMA placement from sysfs (through the sysroot seam): the node and the
 * CPU list of a GPU's PCI device, "-1" as unknown, a missing file as
 * unknown; NVML's attributes are unknown on the seam's devices, which are
 * whole GPUs. */
static void test_numa_from_sysfs(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-numa-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
    sr_put(root, "sys/bus/pci/devices/0000:01:00.0/numa_node", "1\n");
    sr_put(root, "sys/bus/pci/devices/0000:01:00.0/local_cpulist", "0-15,32-47\n");
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "-1\n");
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 2, fake_devs};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gp_test_set_cuda(ctx, &fake);
    int64_t v = -7;
    const char *s = NULL;
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_NUMA_NODE, &v), GPUPROBE_OK);
    assert_int_equal(v, 1);
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_LOCAL_CPUS, &s), GPUPROBE_OK);
    assert_string_equal(s, "0-15,32-47");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "numa_node is -1"));
    assert_int_equal(gpuprobe_device_get_string(ctx, 2, GPUPROBE_ATTR_LOCAL_CPUS, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "0000:02:00.0/local_cpulist"));
    /* an empty list (a device on no node's CPUs) is not known either */
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/local_cpulist", " \n");
    s = "untouched";
    assert_int_equal(gpuprobe_device_get_string(ctx, 2, GPUPROBE_ATTR_LOCAL_CPUS, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_string_equal(s, "untouched");
    assert_non_null(strstr(gpuprobe_last_error(ctx), "GPUPROBE_ATTR_LOCAL_CPUS of device 2"));
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "node 1\n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "no node number"));
    /* Decimal, up to 65535 (the kernel's node numbers). */
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "19\n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v), GPUPROBE_OK);
    assert_int_equal(v, 19);
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "65535\n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v), GPUPROBE_OK);
    assert_int_equal(v, 65535);
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "65536\n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    /* Below -1 is no node either (-1 alone means "none"). */
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "-2\n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "no node number"));
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "99999999999999999999\n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "no node number"));
    /* Nothing, or a number with more after it, is no node. */
    static const char *const junk[] = {"\n", "2x\n", "-"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", junk[i]);
        v = -7;
        assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                         GPUPROBE_ERR_UNSUPPORTED);
        assert_non_null(strstr(gpuprobe_last_error(ctx), "no node number"));
        assert_int_equal(v, -7);
    }
    /* Blanks after the number are the file's line end. */
    sr_put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "3 \n");
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v), GPUPROBE_OK);
    assert_int_equal(v, 3);
    /* A device whose PCI bus id is not known has neither (no sysfs path). */
    char bus[sizeof ctx->devices[2].pci_bus_id];
    gp_strlcpy(bus, ctx->devices[2].pci_bus_id, sizeof bus);
    ctx->devices[2].pci_bus_id[0] = '\0';
    assert_int_equal(gpuprobe_device_get_string(ctx, 2, GPUPROBE_ATTR_LOCAL_CPUS, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "the PCI bus id is not known"));
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "the PCI bus id is not known"));
    gp_strlcpy(ctx->devices[2].pci_bus_id, bus, sizeof ctx->devices[2].pci_bus_id);
    /* The CPU has no such attribute. */
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_NUMA_NODE, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    /* NVML's: unknown here, and why; a whole GPU. */
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_GPU_UTILIZATION, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "has no NVML"));
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_NVML_INDEX, &v),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_MIG_INSTANCE, &v), GPUPROBE_OK);
    assert_int_equal(v, 0);
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_MIG_PARENT_UUID, &s),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "a whole GPU"));
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_MIG_PARENT_UUID, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

static void test_fake_no_device_cause(void **state)
{
    (void)state;
    gp_fake_cuda fake = {GPUPROBE_CUDA_DEVICES_HIDDEN, "hidden for the test", 0, NULL};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &fake);
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 1);
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_AVAILABLE;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_int_equal(cause, GPUPROBE_CUDA_DEVICES_HIDDEN);
    assert_string_equal(detail, "hidden for the test");
    int ver = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &ver), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    gpuprobe_context_destroy(ctx);
}

/* The simulated devices' own figures, and the attributes a real device
 * fills in (set here through the internal table, as enumeration would). */
static void test_fake_cuda_figures(void **state)
{
    (void)state;
    static const gp_fake_cuda_device big[] = {
        {"At INT64_MAX", 9, 0, (uint64_t)INT64_MAX, 1, 0},
        {"Past INT64_MAX", 9, 0, (uint64_t)INT64_MAX + 1, 1, 0},
    };
    gp_fake_cuda fake = {GPUPROBE_CUDA_NO_DEVICE, "ignored when there are devices", 2, big};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &fake);
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_int_equal(cause, GPUPROBE_CUDA_AVAILABLE);
    assert_string_equal(detail, "2 simulated CUDA device(s) (test seam)");
    int64_t v = 0;
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_TOTAL_MEMORY, &v),
                     GPUPROBE_OK);
    assert_true(v == INT64_MAX);
    v = 7;
    assert_int_equal(gpuprobe_device_get_int(ctx, 2, GPUPROBE_ATTR_TOTAL_MEMORY, &v),
                     GPUPROBE_ERR_OVERFLOW);
    assert_int_equal(v, 7);
    const char *s = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_UUID, &s), GPUPROBE_OK);
    assert_string_equal(s, "GPU-00000000-0000-4000-8000-000000000000");
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_PCI_BUS_ID, &s),
                     GPUPROBE_OK);
    assert_string_equal(s, "0000:01:00.0");
    assert_int_equal(gpuprobe_device_get_string(ctx, 2, GPUPROBE_ATTR_PCI_BUS_ID, &s),
                     GPUPROBE_OK);
    assert_string_equal(s, "0000:02:00.0");
    /* simulated devices have no driver or runtime version, whatever was
     * known before the seam was set */
    int ver = 7;
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &ver), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &ver), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    ctx->driver_version = 12040;
    ctx->runtime_version = 12040;
    gp_test_set_cuda(ctx, &fake);
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &ver), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &ver), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(ver, 7);
    assert_int_equal(gpuprobe_device_get_int(ctx, 3, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_string_equal(gpuprobe_last_error(ctx), "device index 3 is out of range: there "
                                                  "are 3 devices (0 is the CPU)");

    /* each integer attribute reads its own field */
    gp_device *d = &ctx->devices[1];
    d->multiprocessors = 132;
    d->clock_khz = 1980000;
    d->memory_clock_khz = 2619000;
    d->memory_bus_bits = 5120;
    static const struct {
        gpuprobe_attr attr;
        int64_t want;
    } attrs[] = {
        {GPUPROBE_ATTR_MULTIPROCESSORS, 132}, {GPUPROBE_ATTR_CLOCK_KHZ, 1980000},
        {GPUPROBE_ATTR_MEMORY_CLOCK_KHZ, 2619000}, {GPUPROBE_ATTR_MEMORY_BUS_BITS, 5120},
        {GPUPROBE_ATTR_CC_MAJOR, 9}, {GPUPROBE_ATTR_CC_MINOR, 0},
        {GPUPROBE_ATTR_CUDA_INDEX, 0}, {GPUPROBE_ATTR_KIND, GPUPROBE_DEVICE_CUDA},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        v = -1;
        assert_int_equal(gpuprobe_device_get_int(ctx, 1, attrs[i].attr, &v), GPUPROBE_OK);
        if (v != attrs[i].want)
            fail_msg("attribute %d: %lld, want %lld", (int)attrs[i].attr, (long long)v,
                     (long long)attrs[i].want);
    }
    gpuprobe_context_destroy(ctx);

    gp_fake_cuda none = {GPUPROBE_CUDA_NO_DEVICE, "none", 0, NULL};
    ctx = new_ctx();
    gp_test_set_cuda(ctx, &none);
    assert_int_equal(gpuprobe_device_get_int(ctx, 1, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_string_equal(gpuprobe_last_error(ctx), "device index 1 is out of range: there "
                                                  "is 1 device (0 is the CPU)");
    gpuprobe_context_destroy(ctx);

    /* at most 4096 simulated devices are enumerated */
    static gp_fake_cuda_device many[5000];
    gp_fake_cuda lots = {GPUPROBE_CUDA_AVAILABLE, NULL, 5000, many};
    ctx = new_ctx();
    gp_test_set_cuda(ctx, &lots);
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 4097);
    assert_int_equal(gpuprobe_device_get_string(ctx, 4096, GPUPROBE_ATTR_SPEC, &s), GPUPROBE_OK);
    assert_string_equal(s, "cuda:4095");
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_NAME, &s), GPUPROBE_OK);
    assert_string_equal(s, "Simulated GPU");
    gpuprobe_context_destroy(ctx);
}

/* Setting the CUDA or the sysroot seam again releases the device table of
 * the previous enumeration: 4097 devices enumerated 40 times leave the
 * heap as one enumeration did. */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void test_seam_releases_table(void **state)
{
    (void)state;
    static gp_fake_cuda_device many[4096];
    gp_fake_cuda lots = {GPUPROBE_CUDA_AVAILABLE, NULL, 4096, many};
    gpuprobe_context *ctx = new_ctx();
    size_t n = 0;
    gp_test_set_cuda(ctx, &lots);
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 4097);
    size_t before = heap_in_use();
    for (int i = 0; i < 20; i++) {
        gp_test_set_cuda(ctx, &lots);
        assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        gp_test_set_sysroot(ctx, NULL);
        assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    }
    size_t after = heap_in_use();
    if (after > before + 64 * 1024)
        fail_msg("40 enumerations grew the heap by %zu bytes (a table is %zu)",
                 after - before, 4097 * sizeof(gp_device));
    gpuprobe_context_destroy(ctx);
}

/* The test seams start a new enumeration each time they are set, after an
 * enumeration as before one. */
static void test_seams_reenumerate(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-dev-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/cpuinfo", "model name : Seam CPU\n");
    sr_put(root, "proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 2, fake_devs};
    gpuprobe_context *ctx = new_ctx();
    size_t real = 0, n = 0;
    const char *name = NULL;
    assert_int_equal(gpuprobe_device_count(ctx, &real), GPUPROBE_OK);
    for (int round = 0; round < 2; round++) {
        gp_test_set_sysroot(ctx, root);
        assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &name),
                         GPUPROBE_OK);
        assert_string_equal(name, "Seam CPU");
        gp_test_set_cuda(ctx, &fake);
        assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, 3);
        gp_test_set_cuda(ctx, NULL);
        gp_test_set_sysroot(ctx, NULL);
        assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, real);
        assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &name),
                         GPUPROBE_OK);
        assert_string_not_equal(name, "Seam CPU");
    }
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* ---- SIMD flags ---- */

static void test_simd_from_flags(void **state)
{
    (void)state;
    static const struct {
        const char *flags;
        int simd;
    } t[] = {
        {"", GPUPROBE_SIMD_NONE},
        {"fpu sse sse2", GPUPROBE_SIMD_NONE},
        {"sse4_1", GPUPROBE_SIMD_NONE},
        {"sse4_2", GPUPROBE_SIMD_SSE4_2},
        {"sse4_2 avx", GPUPROBE_SIMD_AVX},
        {"avx2", GPUPROBE_SIMD_NONE},           /* whole tokens only: no "avx" */
        {"avx2 sse4_2", GPUPROBE_SIMD_SSE4_2},  /* AVX2 without FMA */
        {"avx avx2", GPUPROBE_SIMD_AVX},
        {"avx avx2 fma", GPUPROBE_SIMD_AVX2_FMA},
        {"fma4 avx avx2", GPUPROBE_SIMD_AVX},   /* fma4 is not fma */
        {"avx avx2 fma avx512f", GPUPROBE_SIMD_AVX512},
        {"avx512f avx", GPUPROBE_SIMD_AVX},     /* AVX-512F alone is not enough */
        {"avx512vl avx512bw avx avx2 fma", GPUPROBE_SIMD_AVX2_FMA},
        {"\tavx\t\tavx2\nfma  ", GPUPROBE_SIMD_AVX2_FMA},
        {"xavx avx2x fmax", GPUPROBE_SIMD_NONE},
        {"half thumb fastmult vfp edsp neon", GPUPROBE_SIMD_NONE}, /* ARM */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int got = gp_simd_from_flags(t[i].flags);
        if (got != t[i].simd)
            fail_msg("flags \"%s\": got %d, want %d", t[i].flags, got, t[i].simd);
    }
    assert_int_equal(gp_simd_from_flags(NULL), GPUPROBE_SIMD_NONE);
}

static void test_enumeration_cached(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    const char *a = NULL, *b = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &a), GPUPROBE_OK);
    size_t n1, n2;
    assert_int_equal(gpuprobe_device_count(ctx, &n1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_device_count(ctx, &n2), GPUPROBE_OK);
    assert_int_equal(n1, n2);
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &b), GPUPROBE_OK);
    assert_ptr_equal(a, b); /* owned by the context, stable */
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_device),
        cmocka_unit_test(test_cpu_describe_fake_sysroot),
        cmocka_unit_test(test_cpu_clock_unsupported_via_sysroot),
        cmocka_unit_test(test_cpuinfo_edges),
        cmocka_unit_test(test_sysroot_too_long),
        cmocka_unit_test(test_seam_releases_table),
        cmocka_unit_test(test_seams_reenumerate),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_fake_cuda_devices),
        cmocka_unit_test(test_numa_from_sysfs),
        cmocka_unit_test(test_fake_no_device_cause),
        cmocka_unit_test(test_fake_cuda_figures),
        cmocka_unit_test(test_simd_from_flags),
        cmocka_unit_test(test_enumeration_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
