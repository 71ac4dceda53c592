/*
 * test_pool.c - unit tests of the worker threads (pool.c) and of the
 * allowed CPUs (host_cpu.c) that the CPU bandwidth kernels and the bf16
 * gemm share: every worker runs once per run, each on a thread of its own,
 * the caller's share too; a pool without workers; a thread that cannot be
 * started, at each index, leaves no thread and names which one failed,
 * directly and through the bandwidth measurement and the bf16 matmul; the
 * count of allowed CPUs follows the affinity mask.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "internal.h"
#include "unit_check.h"
#include "cpu_bf16.h"
#include "bandwidth_check.h"

/* The workers' stack: the bandwidth's size (under AddressSanitizer a
 * thread of 64 KiB cannot be started). */
#define STACK ((size_t)256 << 10)

/* What one share records: how often it ran, and on which thread. */
typedef struct share {
    int runs;
    pthread_t thread;
    char pad[64]; /* a stride larger than the record */
} share;

static int calls_of_fn;

static void note_own(void *arg)
{
    share *s = arg;
    s->runs++;
    s->thread = pthread_self();
    __atomic_add_fetch(&calls_of_fn, 1, __ATOMIC_RELAXED);
}

/* A worker's share takes 5 ms more, so that a run that did not wait for
 * the workers would see their counts behind. */
static void note(void *arg)
{
    const struct timespec five_ms = {0, 5000000};
    nanosleep(&five_ms, NULL);
    note_own(arg);
}

static void every_worker_runs(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    enum { WORKERS = 5, RUNS = 4 };
    share shares[WORKERS], own;
    memset(shares, 0, sizeof shares);
    memset(&own, 0, sizeof own);
    gp_pool *p = NULL;
    calls_of_fn = 0;
    assert_int_equal(gp_pool_open(ctx, "test", note, shares, sizeof shares[0], WORKERS,
                                  STACK, 1, &p),
                     GPUPROBE_OK);
    assert_non_null(p);
    assert_int_equal(calls_of_fn, 0); /* nothing runs before a run */
    for (int r = 1; r <= RUNS; r++) {
        gp_pool_run(p, note_own, &own);
        /* each share ran exactly once more, and the run waited for all */
        assert_int_equal(own.runs, r);
        for (int i = 0; i < WORKERS; i++)
            assert_int_equal(shares[i].runs, r);
        assert_int_equal(calls_of_fn, r * (WORKERS + 1));
    }
    /* the caller's share on the caller, each worker on a thread of its own */
    assert_true(pthread_equal(own.thread, pthread_self()));
    for (int i = 0; i < WORKERS; i++) {
        assert_false(pthread_equal(shares[i].thread, pthread_self()));
        for (int j = 0; j < i; j++)
            assert_false(pthread_equal(shares[i].thread, shares[j].thread));
    }
    /* a run without a share of the caller's */
    gp_pool_run(p, NULL, NULL);
    assert_int_equal(own.runs, RUNS);
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(shares[i].runs, RUNS + 1);
    gp_pool_close(p);
    gp_pool_close(NULL);
    gpuprobe_context_destroy(ctx);
}

static void no_workers(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    share own;
    memset(&own, 0, sizeof own);
    gp_pool *p = NULL;
    assert_int_equal(gp_pool_open(ctx, "test", note, NULL, 0, 0, STACK, 1, &p), GPUPROBE_OK);
    gp_pool_run(p, note, &own);
    gp_pool_run(NULL, note, &own);
    assert_int_equal(own.runs, 2);
    assert_true(pthread_equal(own.thread, pthread_self()));
    gp_pool_close(p);
    gpuprobe_context_destroy(ctx);
}

/* The seam: starting the worker of index fail_at fails with EAGAIN. */
static size_t fail_at;
static size_t starts_asked;

static int fail_one(size_t index)
{
    starts_asked++;
    return index == fail_at ? EAGAIN : 0;
}

static void start_failure(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    enum { WORKERS = 4 };
    share shares[WORKERS];
    char want[128];
    gp_test_pool_start = fail_one;
    for (int caller_too = 0; caller_too <= 1; caller_too++)
        for (fail_at = 0; fail_at < WORKERS; fail_at++) {
            memset(shares, 0, sizeof shares);
            starts_asked = 0;
            calls_of_fn = 0;
            gp_pool *p = (gp_pool *)&p;
            assert_int_equal(gp_pool_open(ctx, "test", note, shares, sizeof shares[0], WORKERS,
                                          STACK, caller_too, &p),
                             GPUPROBE_ERR_SYSTEM);
            assert_null(p);
            /* it stopped at the failure, and the workers started before it
             * were stopped without running */
            assert_int_equal(starts_asked, fail_at + 1);
            assert_int_equal(calls_of_fn, 0);
            snprintf(want, sizeof want, "starting test thread %zu of %d: pthread_create failed: %s",
                     fail_at + 1 + (size_t)caller_too, WORKERS + caller_too, strerror(EAGAIN));
            assert_string_equal(gpuprobe_last_error(ctx), want);
        }
    gp_test_pool_start = NULL;
    gpuprobe_context_destroy(ctx);
}

/* Through the bandwidth measurement: the run fails with the thread named,
 * no result, and the next run succeeds. */
static void bandwidth_start_failure(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_bandwidth_options *o = bw_options(256 << 10, 1, 1u << GPUPROBE_BANDWIDTH_TEST_READ);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_CPU_THREADS, 3),
                     GPUPROBE_OK);
    gp_test_pool_start = fail_one;
    fail_at = 1;
    gpuprobe_bandwidth_result *r = (gpuprobe_bandwidth_result *)&r;
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_SYSTEM);
    assert_null(r);
    assert_contains(gpuprobe_last_error(ctx),
                    "starting bandwidth thread 2 of 3: pthread_create failed");
    gp_test_pool_start = NULL;
    assert_int_equal(gpuprobe_bandwidth_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    assert_non_null(r);
    gpuprobe_bandwidth_result_destroy(r);
    gpuprobe_bandwidth_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* Through the bf16 matmul on AMX tiles, where this process can run it: the
 * caller is thread 1, the first worker thread 2. */
static void amx_start_failure(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    char why[160];
    if (!gp_cpu_bf16(ctx, why, sizeof why)) {
        print_message("bf16 on this CPU: %s; the gemm's threads are not started here\n", why);
        gpuprobe_context_destroy(ctx);
        skip();
    }
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    /* 128^3: 4.2 MFLOP, four blocks of 32 columns: two threads */
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 128), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 128), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, 128), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_BF16),
                     GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 2), GPUPROBE_OK);
    gp_test_pool_start = fail_one;
    fail_at = 0;
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_SYSTEM);
    assert_null(r);
    assert_contains(gpuprobe_last_error(ctx),
                    "starting bf16 gemm thread 2 of 2: pthread_create failed");
    gp_test_pool_start = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* The count and the set follow the calling thread's mask. */
static void allowed_cpus(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    cpu_set_t saved;
    assert_int_equal(sched_getaffinity(0, sizeof saved, &saved), 0);
    assert_int_equal(gp_host_allowed_count(), (size_t)CPU_COUNT(&saved));
    unsigned char *bits = NULL;
    size_t nbits = 0;
    assert_int_equal(gp_host_allowed_cpus(ctx, &bits, &nbits), GPUPROBE_OK);
    assert_true(nbits >= CPU_SETSIZE);
    int last = -1;
    for (size_t c = 0; c < nbits; c++) {
        int in = bits[c / 8] >> (c % 8) & 1;
        assert_int_equal(in, c < CPU_SETSIZE && CPU_ISSET(c, &saved));
        if (in)
            last = (int)c;
    }
    free(bits);
    /* narrowed to one CPU, as a cpuset would */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    assert_int_equal(gp_host_allowed_count(), 1);
    assert_int_equal(gp_host_allowed_cpus(ctx, &bits, &nbits), GPUPROBE_OK);
    for (size_t c = 0; c < nbits; c++)
        assert_int_equal(bits[c / 8] >> (c % 8) & 1, (int)c == last);
    free(bits);
    assert_int_equal(sched_setaffinity(0, sizeof saved, &saved), 0);
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_worker_runs),
        cmocka_unit_test(no_workers),
        cmocka_unit_test(start_failure),
        cmocka_unit_test(bandwidth_start_failure),
        cmocka_unit_test(amx_start_failure),
        cmocka_unit_test(allowed_cpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
