/*
 * test_bandwidth.c - unit tests of the bandwidth measurement on the CPU:
 * options and their bounds, bad input, the bytes each test counts, the
 * threads' placement (the allowed CPUs, one per core first, pinned or
 * not), the host's caches and memory modules read from a fake sysfs, the
 * size rule against the host's limits (out of memory), the data check and
 * its negative control, the kernels and the numbers.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bandwidth_internal.h"
#include "unit_check.h"
#include "bandwidth_check.h"

#include "sysroot_util.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)

static gpuprobe_bandwidth_result *run_ok(gpuprobe_context *ctx, const gpuprobe_bandwidth_options *o)
{
    gpuprobe_bandwidth_result *r = NULL;
    gpuprobe_status st = gpuprobe_bandwidth_run(ctx, 0, o, 0, &r);
    if (st != GPUPROBE_OK)
        fail_msg("gpuprobe_bandwidth_run: %s: %s", gpuprobe_status_name(st), gpuprobe_last_error(ctx));
    assert_non_null(r);
    return r;
}

/* The allowed CPUs of this thread, in order; how many. */
static int allowed_cpus(int *out, int cap)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set))
            out[n++] = c;
    return n;
}

/* ---- options and bad input ---------------------------------------------- */

static void options(void **state)
{
    (void)state;
    gpuprobe_bandwidth_options *o = NULL;
    assert_int_equal(gpuprobe_bandwidth_options_create(NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_options_create(&o), GPUPROBE_OK);
    static const int64_t defaults[] = {0, 10, 1, 0, 0, 1};
    for (int p = 0; p < 6; p++) {
        int64_t v = -1, lo = -1, hi = -1;
        assert_int_equal(gpuprobe_bandwidth_options_get(o, (gpuprobe_bandwidth_param)p, &v), GPUPROBE_OK);
        assert_int_equal(v, defaults[p]);
        assert_int_equal(gpuprobe_bandwidth_param_bounds((gpuprobe_bandwidth_param)p, &lo, &hi),
                         GPUPROBE_OK);
        assert_true(lo <= defaults[p] && defaults[p] <= hi);
        /* Out of bounds on either side: refused, nothing changed. */
        assert_int_equal(gpuprobe_bandwidth_options_set(o, (gpuprobe_bandwidth_param)p, lo - 1),
                         GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(gpuprobe_bandwidth_options_set(o, (gpuprobe_bandwidth_param)p, hi + 1),
                         GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(gpuprobe_bandwidth_options_set(o, (gpuprobe_bandwidth_param)p, hi), GPUPROBE_OK);
        assert_int_equal(gpuprobe_bandwidth_options_get(o, (gpuprobe_bandwidth_param)p, &v), GPUPROBE_OK);
        assert_int_equal(v, hi);
    }
    int64_t lo, hi, v;
    assert_int_equal(gpuprobe_bandwidth_param_bounds(GPUPROBE_BANDWIDTH_TESTS, &lo, &hi), GPUPROBE_OK);
    assert_int_equal(hi, 255); /* one bit per test */
    assert_int_equal(gpuprobe_bandwidth_param_bounds((gpuprobe_bandwidth_param)6, &lo, &hi),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_param_bounds(GPUPROBE_BANDWIDTH_RUNS, NULL, &hi),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_options_set(NULL, GPUPROBE_BANDWIDTH_RUNS, 3),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, (gpuprobe_bandwidth_param)-1, 3),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_options_get(o, (gpuprobe_bandwidth_param)6, &v),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_options_get(o, GPUPROBE_BANDWIDTH_RUNS, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_bandwidth_options_destroy(NULL);
    gpuprobe_bandwidth_result_destroy(NULL);
    assert_string_equal(gpuprobe_bandwidth_test_name(GPUPROBE_BANDWIDTH_TEST_TRIAD), "triad");
    assert_string_equal(gpuprobe_bandwidth_test_name(GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE),
                        "d2h_pageable");
    assert_string_equal(gpuprobe_bandwidth_test_name(GPUPROBE_BANDWIDTH_TEST_READ_STREAMS),
                        "read_streams");
    assert_string_equal(gpuprobe_bandwidth_test_name((gpuprobe_bandwidth_test)8), "unknown");
    assert_string_equal(gpuprobe_bandwidth_test_name((gpuprobe_bandwidth_test)-1), "unknown");
}

static void bad_input(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_result *r = (gpuprobe_bandwidth_result *)(uintptr_t)1;
    assert_int_equal(gpuprobe_bandwidth_run(NULL, 0, NULL, 0, &r), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_null(r);
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, NULL, 0, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(gpuprobe_last_error(ctx), "out is NULL");
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, NULL, 2, &r), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(gpuprobe_last_error(ctx), "flags must be 0 (got 0x2)");
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 99, NULL, 0, &r), GPUPROBE_ERR_NOT_FOUND);
    assert_null(r);
    gpuprobe_bandwidth_options *o = bw_options(4095, 1, 0);
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(gpuprobe_last_error(ctx), "buffers of 4095 bytes are too small");
    gpuprobe_bandwidth_options_destroy(o);
    o = bw_options(64 * KiB, 1, 1u << GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE | 1u << GPUPROBE_BANDWIDTH_TEST_READ);
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "h2d_pageable is not measured on cpu");
    assert_null(r);
    gpuprobe_bandwidth_options_destroy(o);
    /* The getters refuse what does not fit them. */
    o = bw_options(64 * KiB, 1, 1u << GPUPROBE_BANDWIDTH_TEST_READ);
    r = run_ok(ctx, o);
    double d;
    int64_t i;
    const char *s;
    assert_int_equal(gpuprobe_bandwidth_result_test(r, GPUPROBE_BANDWIDTH_TEST_COPY,
                                                    GPUPROBE_BANDWIDTH_BEST_GBPS, &d),
                     GPUPROBE_ERR_UNSUPPORTED); /* not asked */
    assert_int_equal(gpuprobe_bandwidth_result_test(r, (gpuprobe_bandwidth_test)8,
                                                    GPUPROBE_BANDWIDTH_BEST_GBPS, &d),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_test(r, GPUPROBE_BANDWIDTH_TEST_READ,
                                                    (gpuprobe_bandwidth_figure)8, &d),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_test(r, GPUPROBE_BANDWIDTH_TEST_READ,
                                                    GPUPROBE_BANDWIDTH_BEST_GBPS, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_get_int(r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS, &i),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_get_double(r, GPUPROBE_BANDWIDTH_METRIC_THREADS, &d),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_get_string(r, GPUPROBE_BANDWIDTH_METRIC_RUNS, &s),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_get_int(NULL, GPUPROBE_BANDWIDTH_METRIC_RUNS, &i),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_get_double(r, GPUPROBE_BANDWIDTH_METRIC_SETUP_S, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_bandwidth_result_get_string(NULL, GPUPROBE_BANDWIDTH_METRIC_METHOD, &s),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_bandwidth_result_destroy(r);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* A CUDA device that is only simulated by the test seam (or a build
 * without CUDA) measures nothing: CUDA_UNAVAILABLE, said why; the CPU's
 * triad is refused there first. */
static void simulated_gpu(void **state)
{
    (void)state;
    static const gp_fake_cuda_device dev[] = {{"Sim GPU", 9, 0, 80 * ((int64_t)1 << 30), 70 * ((int64_t)1 << 30), 0}};
    static const gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, "simulated", 1, dev};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &fake);
    gpuprobe_bandwidth_result *r = NULL;
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 1, NULL, 0, &r), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_null(r);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    gpuprobe_bandwidth_options *o = bw_options(0, 1, 1u << GPUPROBE_BANDWIDTH_TEST_TRIAD);
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(gpuprobe_last_error(ctx), "triad is not measured on cuda:0 (the CPU has it)");
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- what a run reports ----------------------------------------------------- */

/* STREAM's bytes: read once, copy twice, triad three times the array; the
 * figures are those bytes over the pass times, best >= median >= worst. */
static void byte_counting(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(1 * MiB + 64, 3, 0);
    gpuprobe_bandwidth_result *r = run_ok(ctx, o);
    const double b = (double)(MiB + 64);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES), MiB + 64);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES), 0);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_RUNS), 3);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_DEVICE), 0);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED), -1);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN), -1);
    static const struct {
        gpuprobe_bandwidth_test t;
        double times;
    } cpu_tests[] = {{GPUPROBE_BANDWIDTH_TEST_READ, 1.0},
                     {GPUPROBE_BANDWIDTH_TEST_COPY, 2.0},
                     {GPUPROBE_BANDWIDTH_TEST_TRIAD, 3.0},
                     {GPUPROBE_BANDWIDTH_TEST_READ_STREAMS, 1.0}};
    for (size_t i = 0; i < sizeof cpu_tests / sizeof cpu_tests[0]; i++) {
        gpuprobe_bandwidth_test t = cpu_tests[i].t;
        double bytes = fig(r, t, GPUPROBE_BANDWIDTH_BYTES);
        assert_true(bytes == cpu_tests[i].times * b);
        double best = fig(r, t, GPUPROBE_BANDWIDTH_BEST_GBPS);
        double median = fig(r, t, GPUPROBE_BANDWIDTH_MEDIAN_GBPS);
        assert_true(best > 0 && best >= median && median >= fig(r, t, GPUPROBE_BANDWIDTH_WORST_GBPS));
        assert_true(fabs(best - bytes / fig(r, t, GPUPROBE_BANDWIDTH_BEST_S) / 1e9) < 1e-9 * best);
        assert_true(fabs(median - bytes / fig(r, t, GPUPROBE_BANDWIDTH_MEDIAN_S) / 1e9) < 1e-9 * median);
        /* Whole repetitions (how many depends on this machine's speed and
         * load: scenario.bandwidth checks the rule on the simulation's
         * clock). */
        double reps = fig(r, t, GPUPROBE_BANDWIDTH_REPEATS);
        assert_true(reps >= 1 && reps == floor(reps));
    }
    for (int t = GPUPROBE_BANDWIDTH_TEST_H2D_PINNED; t <= GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE; t++) {
        double v;
        assert_int_equal(gpuprobe_bandwidth_result_test(r, t, GPUPROBE_BANDWIDTH_BEST_GBPS, &v),
                         GPUPROBE_ERR_UNSUPPORTED);
    }
    assert_true(strlen(smetric(r, GPUPROBE_BANDWIDTH_METRIC_DEVICE_NAME)) > 0);
    /* The kernels each test ran: where the CPU runs several sets, the one
     * its trial passes found fastest, with each set's trial figure. */
    const gp_bw_kernels *sets = NULL;
    size_t nsets = gp_bw_kernel_sets(&sets);
    char method[512];
    snprintf(method, sizeof method, "%s", smetric(r, GPUPROBE_BANDWIDTH_METRIC_METHOD));
    if (nsets == 1) {
        char want[64];
        snprintf(want, sizeof want, "C kernels (%s); ", sets[0].isa);
        assert_contains(method, want);
    } else {
        assert_contains(method, "C kernels, per test the fastest in 2 trial passes of each of ");
        static const char *const tests[] = {"read", "copy", "triad", "read_streams"};
        for (size_t i = 0; i < 4; i++) {
            char at[32];
            snprintf(at, sizeof at, " %s ", tests[i]);
            const char *p = strstr(method, at);
            assert_non_null(p);
            p += strlen(at);
            size_t k = 0;
            while (k < nsets && strncmp(p, sets[k].isa, strlen(sets[k].isa)) != 0)
                k++;
            assert_true(k < nsets); /* one of the sets, then its trials */
            p += strlen(sets[k].isa);
            assert_true(p[0] == ' ' && p[1] == '(');
            double g[3] = {0};
            int got = nsets == 2 ? sscanf(p, " (%lf/%lf GB/s)", &g[0], &g[1])
                                 : sscanf(p, " (%lf/%lf/%lf GB/s)", &g[0], &g[1], &g[2]);
            assert_int_equal(got, (int)nsets);
            for (size_t s = 0; s < nsets; s++) {
                assert_true(g[s] > 0);
                assert_true(g[s] <= g[k] + 0.05 + 1e-9); /* the chosen is the fastest */
            }
        }
    }
    gpuprobe_bandwidth_result_destroy(r);
    /* Without a warm-up there are no trials: the widest set. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_WARMUP, 0), GPUPROBE_OK);
    r = run_ok(ctx, o);
    char want[96];
    snprintf(want, sizeof want, "C kernels (%s%s); ", sets[0].isa,
             nsets == 1 ? "" : ", the widest: no warm-up, no trials");
    assert_contains(smetric(r, GPUPROBE_BANDWIDTH_METRIC_METHOD), want);
    gpuprobe_bandwidth_result_destroy(r);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_WARMUP, 1), GPUPROBE_OK);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* One thread per allowed core, each pinned to its CPU; with the affinity
 * narrowed to one CPU, one thread there; more threads than CPUs wrap
 * around; unpinned threads say so. */
static void thread_placement(void **state)
{
    (void)state;
    int cpus[CPU_SETSIZE];
    int n = allowed_cpus(cpus, CPU_SETSIZE);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(256 * KiB, 1, 1u << GPUPROBE_BANDWIDTH_TEST_READ);
    gpuprobe_bandwidth_result *r = run_ok(ctx, o);
    int64_t threads = imetric(r, GPUPROBE_BANDWIDTH_METRIC_THREADS);
    assert_true(threads >= 1 && threads <= n);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS), threads);
    assert_contains(smetric(r, GPUPROBE_BANDWIDTH_METRIC_METHOD), " pinned, to CPU ");
    gpuprobe_bandwidth_result_destroy(r);

    /* Narrowed to the last allowed CPU (as a cpuset would). */
    cpu_set_t saved, one;
    assert_int_equal(sched_getaffinity(0, sizeof saved, &saved), 0);
    CPU_ZERO(&one);
    CPU_SET(cpus[n - 1], &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    r = run_ok(ctx, o);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_THREADS), 1);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS), 1);
    char want[64];
    snprintf(want, sizeof want, "1 thread (1 pinned, to CPU %d)", cpus[n - 1]);
    assert_contains(smetric(r, GPUPROBE_BANDWIDTH_METRIC_METHOD), want);
    gpuprobe_bandwidth_result_destroy(r);
    /* Three threads on that one CPU. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_CPU_THREADS, 3), GPUPROBE_OK);
    r = run_ok(ctx, o);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_THREADS), 3);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS), 3);
    assert_contains(smetric(r, GPUPROBE_BANDWIDTH_METRIC_METHOD), "(1 CPUs for 3 threads)");
    gpuprobe_bandwidth_result_destroy(r);
    assert_int_equal(sched_setaffinity(0, sizeof saved, &saved), 0);
    /* Left to the scheduler. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_PIN_THREADS, 0), GPUPROBE_OK);
    r = run_ok(ctx, o);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS), 0);
    assert_contains(smetric(r, GPUPROBE_BANDWIDTH_METRIC_METHOD), "3 threads (placed by the scheduler)");
    gpuprobe_bandwidth_result_destroy(r);
    /* The caller's own placement is untouched. */
    cpu_set_t after;
    assert_int_equal(sched_getaffinity(0, sizeof after, &after), 0);
    assert_true(CPU_EQUAL(&after, &saved));
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* A kernel that left a wrong element is caught (the negative control of
 * the check after the passes). */
static int corrupt_index;
static void corrupt(double *a, double *b, double *c, size_t n)
{
    double *arrays[3] = {a, b, c};
    arrays[corrupt_index % 3][n / 2 + (size_t)corrupt_index] += 1.0;
}

static void check_catches_a_wrong_element(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(64 * KiB, 1, 0);
    gpuprobe_bandwidth_result *r = NULL;
    for (corrupt_index = 0; corrupt_index < 3; corrupt_index++) {
        gp_test_bw_corrupt = corrupt;
        gpuprobe_status st = gpuprobe_bandwidth_run(ctx, 0, o, 0, &r);
        gp_test_bw_corrupt = NULL;
        assert_int_equal(st, GPUPROBE_ERR_VERIFY_FAILED);
        assert_null(r);
        assert_contains(gpuprobe_last_error(ctx), "1 array elements (or sums) were not what");
    }
    /* Only the triad asked: b is a + 3 c with c still 0. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_TESTS,
                                                    1u << GPUPROBE_BANDWIDTH_TEST_TRIAD), GPUPROBE_OK);
    r = run_ok(ctx, o);
    gpuprobe_bandwidth_result_destroy(r);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* The three arrays start at different offsets within a page (and so within
 * the 2 MiB a large mapping is aligned to): arrays at the same offset ran
 * copy and triad 10-40% slower on a Zen 4 (cpu_bandwidth.c). */
static uintptr_t seen[3];
static void record(double *a, double *b, double *c, size_t n)
{
    (void)n;
    seen[0] = (uintptr_t)a;
    seen[1] = (uintptr_t)b;
    seen[2] = (uintptr_t)c;
}

static void arrays_staggered(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(4 * MiB, 1, 0);
    gp_test_bw_corrupt = record;
    gpuprobe_bandwidth_result *r = run_ok(ctx, o);
    gp_test_bw_corrupt = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(seen[i] % 64, 0); /* whole cache lines */
        for (int j = 0; j < i; j++)
            assert_int_not_equal(seen[i] % 4096, seen[j] % 4096);
    }
    gpuprobe_bandwidth_result_destroy(r);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- the host's CPUs, caches and memory modules from sysfs ------------------ */

static char *fake_root(void)
{
    static char root[64];
    snprintf(root, sizeof root, "/tmp/gp_bw_XXXXXX");
    assert_non_null(mkdtemp(root));
    return root;
}

static void put_cache(const char *root, int cpu, int index, int level, const char *type,
                      const char *size, const char *shared)
{
    char rel[128];
    const char *names[] = {"level", "type", "size", "shared_cpu_list"};
    char lv[8];
    snprintf(lv, sizeof lv, "%d\n", level);
    const char *vals[] = {lv, type, size, shared};
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cache/index%d/%s", cpu, index, names[i]);
        sr_put(root, rel, vals[i]);
    }
}

static void put_siblings(const char *root, int cpu, const char *list)
{
    char rel[128];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    sr_put(root, rel, list);
}

static void cpu_order_and_caches(void **state)
{
    (void)state;
    char *root = fake_root();
    /* Four CPUs, two cores of two threads: {0,2} and {1,3}; CPUs 0-1 share
     * one L3, CPUs 2-3 another; each core has its own L2. */
    put_siblings(root, 0, "0,2\n");
    put_siblings(root, 2, "0,2\n");
    put_siblings(root, 1, "1,3\n");
    put_siblings(root, 3, "1,3\n");
    for (int c = 0; c < 4; c++) {
        put_cache(root, c, 0, 1, "Data\n", "48K\n", c % 2 ? "1,3\n" : "0,2\n");
        put_cache(root, c, 1, 1, "Instruction\n", "32K\n", c % 2 ? "1,3\n" : "0,2\n");
        put_cache(root, c, 2, 2, "Unified\n", "2048K\n", c % 2 ? "1,3\n" : "0,2\n");
        put_cache(root, c, 3, 3, "Unified\n", "32M\n", c < 2 ? "0-1\n" : "2-3\n");
    }
    unsigned char all[2] = {0x0f, 0}, some[2] = {0x0e, 0};
    int order[16];
    size_t cores = 0;
    assert_int_equal(gp_host_cpu_order(root, all, 16, order, 16, &cores), 4);
    assert_int_equal(cores, 2);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 2);
    assert_int_equal(order[3], 3);
    /* CPU 0 not allowed: its core's first allowed CPU is 2. */
    assert_int_equal(gp_host_cpu_order(root, some, 16, order, 16, &cores), 3);
    assert_int_equal(cores, 2);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 3);
    /* The cap. */
    assert_int_equal(gp_host_cpu_order(root, all, 16, order, 1, &cores), 1);
    uint64_t b = 0;
    assert_int_equal(gp_host_llc_bytes(root, (const int[]){0, 1}, 2, &b), 0);
    assert_int_equal(b, 32 * MiB); /* one L3, counted once */
    assert_int_equal(gp_host_llc_bytes(root, (const int[]){0, 1, 2, 3}, 4, &b), 0);
    assert_int_equal(b, 64 * MiB);
    assert_int_equal(gp_host_llc_bytes(root, (const int[]){7}, 1, &b), -1);
    /* No topology: every CPU is its own core. */
    sr_rm_tree(root);
    root = fake_root();
    assert_int_equal(gp_host_cpu_order(root, all, 16, order, 16, &cores), 4);
    assert_int_equal(cores, 4);
    sr_rm_tree(root);
}

static void put_binary(const char *root, const char *rel, const unsigned char *bytes, size_t n)
{
    char p[GP_PATH_LEN];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    sr_put(root, rel, "");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* An SMBIOS 3.3 memory device (type 17, 0x5C bytes) and its strings. */
static size_t dmi_entry(unsigned char *raw, unsigned size, unsigned width, unsigned speed,
                        unsigned configured)
{
    memset(raw, 0, 0x60);
    raw[0] = 17;
    raw[1] = 0x5C;
    raw[0x0A] = (unsigned char)width;
    raw[0x0B] = (unsigned char)(width >> 8);
    raw[0x0C] = (unsigned char)size;
    raw[0x0D] = (unsigned char)(size >> 8);
    raw[0x15] = (unsigned char)speed;
    raw[0x16] = (unsigned char)(speed >> 8);
    raw[0x20] = (unsigned char)configured;
    raw[0x21] = (unsigned char)(configured >> 8);
    memcpy(raw + 0x5C, "A\0\0", 3);
    return 0x5F;
}

static void dmi_modules(void **state)
{
    (void)state;
    unsigned char raw[0x60];
    gp_dmi_module m;
    size_t n = dmi_entry(raw, 16384, 64, 5600, 4800);
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), 0);
    assert_int_equal(m.present, 1);
    assert_int_equal(m.width_bits, 64);
    assert_int_equal(m.mts, 4800); /* configured, not rated */
    n = dmi_entry(raw, 16384, 64, 5600, 0);
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), 0);
    assert_int_equal(m.mts, 5600);
    /* 0xFFFF: the extended speed fields (SMBIOS 3.3). */
    n = dmi_entry(raw, 16384, 0xFFFF, 0xFFFF, 0xFFFF);
    raw[0x58] = 0x40;
    raw[0x59] = 0x1F; /* 8000 */
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), 0);
    assert_int_equal(m.mts, 8000);
    assert_int_equal(m.width_bits, 0);
    n = dmi_entry(raw, 0, 64, 3200, 3200);
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), 0);
    assert_int_equal(m.present, 0);
    /* An old, short entry: the rated speed only. */
    n = dmi_entry(raw, 8192, 64, 2666, 2400);
    raw[1] = 0x17;
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), 0);
    assert_int_equal(m.mts, 2666);
    raw[0] = 16;
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), -1);
    raw[0] = 17;
    raw[1] = 0x10;
    assert_int_equal(gp_parse_dmi_memory_device(raw, n, &m), -1);
    raw[1] = 0x80; /* longer than the entry */
    assert_int_equal(gp_parse_dmi_memory_device(raw, 0x60, &m), -1);
    assert_int_equal(gp_parse_dmi_memory_device(NULL, n, &m), -1);

    /* Through a fake sysfs: two modules, an empty slot, another type. */
    char *root = fake_root();
    gp_dmi_memory d;
    gp_host_dmi_memory(root, &d);
    assert_true(d.gbps == 0);
    assert_contains(d.why, "no DMI tables in sysfs");
    n = dmi_entry(raw, 16384, 64, 5600, 4800);
    put_binary(root, "sys/firmware/dmi/entries/17-0/raw", raw, n);
    put_binary(root, "sys/firmware/dmi/entries/17-1/raw", raw, n);
    n = dmi_entry(raw, 0, 64, 0, 0);
    put_binary(root, "sys/firmware/dmi/entries/17-2/raw", raw, n);
    put_binary(root, "sys/firmware/dmi/entries/16-0/raw", raw, n);
    gp_host_dmi_memory(root, &d);
    assert_int_equal(d.modules, 2);
    assert_true(fabs(d.gbps - 76.8) < 1e-9);
    assert_contains(d.why, "DMI tables: 2 modules x 64-bit at 4800 MT/s");
    /* The run reports that peak and the fraction of it. */
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_bandwidth_options *o = bw_options(256 * KiB, 1, 1u << GPUPROBE_BANDWIDTH_TEST_READ);
    gpuprobe_bandwidth_result *r = run_ok(ctx, o);
    double peak = -1;
    assert_int_equal(gpuprobe_bandwidth_result_get_double(r, GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS,
                                                          &peak), GPUPROBE_OK);
    assert_true(fabs(peak - 76.8) < 1e-9);
    double best = fig(r, GPUPROBE_BANDWIDTH_TEST_READ, GPUPROBE_BANDWIDTH_BEST_GBPS);
    assert_true(fabs(fig(r, GPUPROBE_BANDWIDTH_TEST_READ, GPUPROBE_BANDWIDTH_PEAK_FRACTION) -
                     best / 76.8) < 1e-12);
    gpuprobe_bandwidth_result_destroy(r);
    /* One module that states no speed: no peak, and why. */
    n = dmi_entry(raw, 16384, 64, 0, 0);
    put_binary(root, "sys/firmware/dmi/entries/17-3/raw", raw, n);
    gp_host_dmi_memory(root, &d);
    assert_true(d.gbps == 0);
    assert_contains(d.why, "none: 1 of the 3 memory modules");
    r = run_ok(ctx, o);
    assert_contains(smetric(r, GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE), "none: 1 of the 3");
    assert_true(fig(r, GPUPROBE_BANDWIDTH_TEST_READ, GPUPROBE_BANDWIDTH_PEAK_FRACTION) == 0);
    gpuprobe_bandwidth_result_destroy(r);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    /* Readable by root only (as on most systems): say so. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char p[GP_PATH_LEN];
        for (int i = 0; i < 4; i++) {
            snprintf(p, sizeof p, "%s/sys/firmware/dmi/entries/17-%d/raw", root, i);
            chmod(p, geteuid() == 0 ? 0400 : 0); /* root's own, or nobody's */
        }
        chmod(root, 0755); /* the tree is searchable, the entries are not readable */
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        gp_host_dmi_memory(root, &d);
        _exit(d.gbps == 0 && strstr(d.why, "readable by root only") ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    sr_rm_tree(root);
}

/* ---- sizes against the host's limits ------------------------------------------------ */

static void out_of_memory(void **state)
{
    (void)state;
    char *root = fake_root();
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    /* 16 MiB available: 3 arrays of 8 MiB do not fit; refused, named. */
    sr_put(root, "proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 16384 kB\n");
    gpuprobe_bandwidth_options *o = bw_options(8 * MiB, 1, 0);
    /* Two threads, whatever this machine has: each thread's stack is taken
     * from the room, so the sizes below hold on a host of any size. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_CPU_THREADS, 2), GPUPROBE_OK);
    gpuprobe_bandwidth_result *r = NULL;
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(r);
    assert_contains(gpuprobe_last_error(ctx), "bandwidth on cpu needs 25165824 bytes");
    assert_contains(gpuprobe_last_error(ctx), "MemAvailable");
    /* Automatic: the rule's 256 MiB (no cache known here) made smaller: half
     * of 16 MiB (less the two threads' stacks) over three arrays, 2 MiB each. */
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, 0), GPUPROBE_OK);
    r = run_ok(ctx, o);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES), 256 * MiB);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES), 0);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES), 2 * MiB);
    gpuprobe_bandwidth_result_destroy(r);
    /* With a known cache: 4 x 24 MiB asked, 24 MiB given (a sixth of
     * 150 MiB, less the stacks, in 2 MiB steps). */
    for (int c = 0; c < 64; c++)
        put_cache(root, c, 0, 3, "Unified\n", "24M\n", "0-63\n");
    sr_put(root, "proc/meminfo", "MemTotal: 8388608 kB\nMemAvailable: 153600 kB\n");
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_TESTS,
                                                    1u << GPUPROBE_BANDWIDTH_TEST_READ), GPUPROBE_OK);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_WARMUP, 0), GPUPROBE_OK);
    r = run_ok(ctx, o);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES), 24 * MiB);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES), 96 * MiB);
    assert_int_equal(imetric(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES), 24 * MiB);
    gpuprobe_bandwidth_result_destroy(r);
    /* Nothing fits at all. */
    sr_put(root, "proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 8 kB\n");
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_contains(gpuprobe_last_error(ctx), "no room for 3 buffers of 4096 bytes");
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* Under an address-space limit (a child process: the limit stays there). */
static void address_space_limit(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {(rlim_t)2 << 30, (rlim_t)2 << 30};
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        unsigned long long vm = 0;
        while (f && fgets(line, sizeof line, f))
            sscanf(line, "VmSize: %llu kB", &vm);
        if (f)
            fclose(f);
        rl.rlim_cur = rl.rlim_max = (rlim_t)(vm * 1024 + 256 * MiB);
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(3);
        gpuprobe_context *ctx = NULL;
        if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
            _exit(4);
        gpuprobe_bandwidth_options *o = NULL;
        gpuprobe_bandwidth_options_create(&o);
        gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, 128 * MiB);
        gpuprobe_bandwidth_result *r = NULL;
        gpuprobe_status st = gpuprobe_bandwidth_run(ctx, 0, o, 0, &r);
        int ok = st == GPUPROBE_ERR_OUT_OF_MEMORY && !r &&
                 strstr(gpuprobe_last_error(ctx), "RLIMIT_AS");
        gpuprobe_bandwidth_options_destroy(o);
        gpuprobe_context_destroy(ctx);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- parsers, kernels, numbers ------------------------------------------------------- */

static void parsers(void **state)
{
    (void)state;
    unsigned char set[4];
    assert_int_equal(gp_parse_cpu_list("0-3,8,10-11\n", set, 32), 0);
    assert_int_equal(set[0], 0x0f);
    assert_int_equal(set[1], 0x0d);
    assert_int_equal(gp_parse_cpu_list("\n", set, 32), 0);
    assert_int_equal(set[0] | set[1] | set[2] | set[3], 0);
    static const char *const bad[] = {"3-1", "a", "1,", "1-", "0-32", "1 2", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gp_parse_cpu_list(bad[i], set, 32), -1);
    assert_int_equal(gp_parse_cpu_list("99999999999999999999999", set, 32), -1);
    uint64_t b = 0;
    assert_int_equal(gp_parse_cache_size("107520K\n", &b), 0);
    assert_int_equal(b, 107520 * KiB);
    assert_int_equal(gp_parse_cache_size("32M", &b), 0);
    assert_int_equal(b, 32 * MiB);
    assert_int_equal(gp_parse_cache_size("1G", &b), 0);
    assert_int_equal(gp_parse_cache_size("512", &b), 0);
    assert_int_equal(b, 512);
    assert_int_equal(gp_parse_cache_size("12X", &b), -1);
    assert_int_equal(gp_parse_cache_size("K", &b), -1);
    assert_int_equal(gp_parse_cache_size(NULL, &b), -1);
}

/* Every kernel set this CPU runs gives the exact answers, at lengths on
 * either side of the read's 32 partial sums and of whole lines. */
static void kernels(void **state)
{
    (void)state;
    static const size_t lengths[] = {0, 1, 7, 8, 31, 32, 33, 1000, 4099};
    const gp_bw_kernels *sets = NULL;
    size_t nsets = gp_bw_kernel_sets(&sets);
    assert_true(nsets >= 1 && nsets <= 3);
    double *a = malloc(4100 * sizeof *a), *b = malloc(4100 * sizeof *b), *c = malloc(4100 * sizeof *c);
    assert_true(a && b && c);
    for (size_t k = 0; k < nsets; k++) {
        const gp_bw_kernels *ks = &sets[k];
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            size_t n = lengths[l];
            double want = 0;
            for (size_t i = 0; i < 4100; i++) {
                a[i] = (double)(i % 7) + 0.5;
                b[i] = c[i] = -1;
                if (i < n)
                    want += a[i];
            }
            assert_true(ks->sum(a, n) == want); /* exact: halves of small integers */
            for (unsigned s = 0; s <= 17; s++)
                assert_true(ks->sum_streams(a, n, s) == want);
            ks->copy(c, a, n);
            ks->triad(b, a, c, 3.0, n);
            for (size_t i = 0; i < 4100; i++) {
                assert_true(c[i] == (i < n ? a[i] : -1));
                assert_true(b[i] == (i < n ? 4 * a[i] : -1));
            }
        }
        /* Each element read once, whatever the streams: distinct values
         * (multiples of 0.5 below 2^35, so every sum is exact). */
        for (size_t i = 0; i < 4100; i++)
            a[i] = (double)i * (double)i + 0.5;
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            double want = 0;
            for (size_t i = 0; i < lengths[l]; i++)
                want += a[i];
            assert_true(ks->sum(a, lengths[l]) == want);
            for (unsigned s = 1; s <= 16; s *= 2)
                assert_true(ks->sum_streams(a, lengths[l], s) == want);
        }
    }
    free(a);
    free(b);
    free(c);
    /* The widest first: on x86-64 a suffix of AVX-512, AVX2, SSE2, as the
     * CPU's flags allow. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const char *const names[] = {"AVX-512", "AVX2", "SSE2"};
    __builtin_cpu_init();
    size_t want = __builtin_cpu_supports("avx512f") ? 3 : __builtin_cpu_supports("avx2") ? 2 : 1;
    assert_int_equal(nsets, want);
    for (size_t k = 0; k < nsets; k++)
        assert_string_equal(sets[k].isa, names[3 - nsets + k]);
#else
    assert_int_equal(nsets, 1);
    assert_string_equal(sets[0].isa, "compiler default");
#endif
    /* Repetitions: as many as make a pass last 1.25 x 5 ms when shorter. */
    assert_int_equal(gp_bw_reps_for(GP_BW_PASS_S), 1);
    assert_int_equal(gp_bw_reps_for(1.0), 1);
    assert_int_equal(gp_bw_reps_for(0.001), 7);
    assert_int_equal(gp_bw_reps_for(0.0025), 3);
    assert_int_equal(gp_bw_reps_for(0.0), GP_BW_MAX_REPS);
    assert_int_equal(gp_bw_reps_for(1e-12), GP_BW_MAX_REPS);
    /* STREAM's bytes. */
    assert_true(gp_bw_pass_bytes(GPUPROBE_BANDWIDTH_TEST_READ, 1000, 2) == 2000.0);
    assert_true(gp_bw_pass_bytes(GPUPROBE_BANDWIDTH_TEST_COPY, 1000, 1) == 2000.0);
    assert_true(gp_bw_pass_bytes(GPUPROBE_BANDWIDTH_TEST_TRIAD, 1000, 1) == 3000.0);
    assert_true(gp_bw_pass_bytes(GPUPROBE_BANDWIDTH_TEST_READ_STREAMS, 1000, 2) == 1000.0);
    assert_true(gp_bw_pass_bytes(GPUPROBE_BANDWIDTH_TEST_H2D_PINNED, 1000, 2) == 1000.0);
}

static void numbers(void **state)
{
    (void)state;
    assert_true(fabs(gp_bw_pcie_gbps(5, 16) - 63.015384615) < 1e-6);
    assert_true(fabs(gp_bw_pcie_gbps(4, 16) - 31.507692308) < 1e-6);
    assert_true(fabs(gp_bw_pcie_gbps(3, 8) - 7.876923077) < 1e-6);
    assert_true(gp_bw_pcie_gbps(1, 1) == 0.25);
    assert_true(gp_bw_pcie_gbps(6, 16) == 128.0);
    assert_true(gp_bw_pcie_gbps(0, 16) == 0 && gp_bw_pcie_gbps(8, 16) == 0);
    assert_true(gp_bw_pcie_gbps(5, 0) == 0 && gp_bw_pcie_gbps(5, 64) == 0 && gp_bw_pcie_gbps(-1, -1) == 0);
    assert_true(fabs(gp_bw_gpu_memory_gbps(6144, 3201) - 4916.736) < 1e-9);
    assert_true(gp_bw_gpu_memory_gbps(0, 3201) == 0 && gp_bw_gpu_memory_gbps(5120, -1) == 0);
    assert_true(fabs(gp_bw_dimm_gbps(64, 4800) - 38.4) < 1e-12);
    assert_true(gp_bw_dimm_gbps(64, 0) == 0);
    /* The size rule. */
    assert_int_equal(gp_bw_target_bytes(1, 50 * MiB), 1024 * MiB);
    assert_int_equal(gp_bw_target_bytes(1, 256 * MiB), 2048 * MiB);
    assert_int_equal(gp_bw_target_bytes(1, 0), 1024 * MiB);
    assert_int_equal(gp_bw_target_bytes(0, 105 * MiB), 420 * MiB);
    assert_int_equal(gp_bw_target_bytes(0, 2 * MiB), 64 * MiB);
    assert_int_equal(gp_bw_target_bytes(0, 0), 256 * MiB);
    assert_int_equal(gp_bw_target_bytes(0, UINT64_MAX), 64 * MiB); /* no overflow */
    assert_int_equal(gp_bw_fit_bytes(420 * MiB + 1, UINT64_MAX), 422 * MiB);
    assert_int_equal(gp_bw_fit_bytes(420 * MiB, 100 * MiB + 5), 100 * MiB);
    assert_int_equal(gp_bw_fit_bytes(420 * MiB, 1 * MiB + 5), 1 * MiB);
    assert_int_equal(gp_bw_fit_bytes(420 * MiB, 4095), 0);
    assert_int_equal(gp_bw_fit_bytes(UINT64_MAX, UINT64_MAX), UINT64_MAX); /* not rounded past it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(simulated_gpu),
        cmocka_unit_test(byte_counting),
        cmocka_unit_test(thread_placement),
        cmocka_unit_test(check_catches_a_wrong_element),
        cmocka_unit_test(arrays_staggered),
        cmocka_unit_test(cpu_order_and_caches),
        cmocka_unit_test(dmi_modules),
        cmocka_unit_test(out_of_memory),
        cmocka_unit_test(address_space_limit),
        cmocka_unit_test(parsers),
        cmocka_unit_test(kernels),
        cmocka_unit_test(numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
