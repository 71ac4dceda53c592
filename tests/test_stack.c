/*
 * test_stack.c - every public call fits in a small thread stack.
 *
 * Programs run libgpuprobe on threads of their own, some with small stacks
 * (thread pools, language runtimes). Each call below - on a fresh context,
 * so that the first, heaviest path runs (enumeration, /proc and /sys
 * reads, the CUDA loader) - is measured on a thread whose stack was filled
 * with a pattern first: the deepest byte overwritten gives the stack it
 * used, less what an empty thread function uses (glibc keeps the thread's
 * descriptor and TLS at the top of the stack). Each must stay under
 * BUDGET (16 KiB). Then all of them run again, one after the other, on a
 * thread whose whole stack is 32 KiB.
 *
 * The CUDA loader is measured both ways: with the runtime looked for by
 * the system loader, and from GPUPROBE_CUDA_LIBDIR=/usr/local/cuda/lib64
 * when a runtime is there. Its decision (dlopen() of the runtime and the
 * driver with their initialisers, cuInit, cudaGetDeviceCount) runs on a
 * thread of the library's own with a large stack: on an H200 the driver's
 * first cuInit took 13.7 KiB more than the library's frames, and ran on
 * the caller's stack until then (26744 bytes for device_count).
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

#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

/* Under valgrind, a finished thread's stack is no longer addressable: say
 * it is, to read the pattern back (the header is optional). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define READABLE(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif
#endif
#ifndef READABLE
#define READABLE(p, n) ((void)(p), (void)(n))
#endif

#if defined(__SANITIZE_ADDRESS__)
#define GP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GP_ASAN 1
#endif
#endif
#ifndef GP_ASAN
#define GP_ASAN 0
#endif

#define KiB 1024
#define BUDGET (16 * KiB)
#define PAINTED (512 * KiB)
#define SMALL (32 * KiB)
#define PATTERN 0xA5
#define GiB (UINT64_C(1) << 30)

static const gp_fake_cuda_device fake_devs[] = {
    {"Fake A", 8, 0, 40 * GiB, 30 * GiB, 0},
    {"Fake B", 9, 0, 80 * GiB, 70 * GiB, 600u << 20},
};
static const gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, "fake", 2, fake_devs};

/* Each call returns 0 when it behaved (its status is checked here, on the
 * small stack, without cmocka's longjmp across threads). */
typedef int (*call_fn)(void);

static gpuprobe_context *fresh(int simulated)
{
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return NULL;
    if (simulated)
        gp_test_set_cuda(ctx, &fake);
    return ctx;
}

#define WITH_CTX(simulated, expr)                                             \
    do {                                                                      \
        gpuprobe_context *ctx = fresh(simulated);                             \
        if (!ctx)                                                             \
            return 1;                                                         \
        int bad_ = (expr);                                                    \
        gpuprobe_context_destroy(ctx);                                        \
        return bad_;                                                          \
    } while (0)

static int c_nothing(void) { return 0; }
static int c_create(void) { WITH_CTX(0, 0); }
static int c_count(void)
{
    size_t n = 0;
    WITH_CTX(0, gpuprobe_device_count(ctx, &n) != GPUPROBE_OK || n < 1);
}
static int c_cuda_status(void)
{
    gpuprobe_cuda_cause cause;
    const char *detail = NULL;
    WITH_CTX(0, gpuprobe_cuda_status(ctx, &cause, &detail) != GPUPROBE_OK);
}
static int c_versions(void)
{
    int v = 0;
    WITH_CTX(0, (gpuprobe_cuda_driver_version(ctx, &v),
                 gpuprobe_cuda_runtime_version(ctx, &v), 0));
}
static int c_attrs(void)
{
    gpuprobe_context *ctx = fresh(0);
    if (!ctx)
        return 1;
    int bad = 0;
    for (int a = GPUPROBE_ATTR_KIND; a <= GPUPROBE_ATTR_BLAS_CONFIG; a++) {
        int64_t i = 0;
        const char *s = NULL;
        gpuprobe_status st = gpuprobe_device_get_int(ctx, 0, (gpuprobe_attr)a, &i);
        if (st == GPUPROBE_ERR_INVALID_ARGUMENT) /* a string attribute */
            st = gpuprobe_device_get_string(ctx, 0, (gpuprobe_attr)a, &s);
        bad |= st != GPUPROBE_OK && st != GPUPROBE_ERR_UNSUPPORTED;
    }
    gpuprobe_context_destroy(ctx);
    return bad;
}
static int c_memory(void)
{
    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    WITH_CTX(0, gpuprobe_device_memory(ctx, 0, &mi, 0) != GPUPROBE_OK);
}
static int c_memory_simulated(void)
{
    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    WITH_CTX(1, gpuprobe_device_memory(ctx, 2, &mi, 0) != GPUPROBE_OK);
}
static int c_capacity(void)
{
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    WITH_CTX(0, gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                         GPUPROBE_WORKLOAD_INFERENCE, 0, &cap) !=
                    GPUPROBE_OK);
}
static int c_capacity_simulated(void)
{
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    WITH_CTX(1, gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_BF16,
                                         GPUPROBE_WORKLOAD_TRAINING, 0, &cap) !=
                    GPUPROBE_OK);
}
static int c_select(void)
{
    size_t d = 0;
    const char *reason = NULL;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 1u << 20;
    req.fit_params = 1000;
    WITH_CTX(0, gpuprobe_select(ctx, "auto", &req, GPUPROBE_SELECT_IGNORE_ENV, &d,
                                &reason) != GPUPROBE_OK);
}
static int c_select_failures(void)
{
    size_t d = 0;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = UINT64_C(900000000000000); /* fits nowhere */
    WITH_CTX(1, gpuprobe_select(ctx, "auto", &req, GPUPROBE_SELECT_IGNORE_ENV, &d,
                                NULL) != GPUPROBE_ERR_NO_FIT ||
                    gpuprobe_select(ctx, "cuda:7", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                    &d, NULL) != GPUPROBE_ERR_NOT_FOUND ||
                    gpuprobe_select(ctx, "CUDA:01x", NULL,
                                    GPUPROBE_SELECT_IGNORE_ENV, &d, NULL) !=
                        GPUPROBE_ERR_INVALID_ARGUMENT);
}
static int c_select_simulated(void)
{
    size_t d = 0;
    const char *reason = NULL;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 20000000000;
    WITH_CTX(1, gpuprobe_select(ctx, "cuda", &req, GPUPROBE_SELECT_IGNORE_ENV, &d,
                                &reason) != GPUPROBE_OK);
}
static int c_matmul(void)
{
    gpuprobe_matmul_options *o = NULL;
    if (gpuprobe_matmul_options_create(&o) != GPUPROBE_OK)
        return 1;
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 24);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 1);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_context *ctx = fresh(0);
    int bad = !ctx || gpuprobe_matmul_run(ctx, 0, o, 0, &r) != GPUPROBE_OK;
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_context_destroy(ctx);
    gpuprobe_matmul_options_destroy(o);
    return bad;
}
static int c_bandwidth(void)
{
    gpuprobe_bandwidth_options *o = NULL;
    if (gpuprobe_bandwidth_options_create(&o) != GPUPROBE_OK)
        return 1;
    gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, 65536);
    gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_RUNS, 1);
    gpuprobe_bandwidth_result *r = NULL;
    gpuprobe_context *ctx = fresh(0);
    int bad = !ctx || gpuprobe_bandwidth_run(ctx, 0, o, 0, &r) != GPUPROBE_OK;
    gpuprobe_bandwidth_result_destroy(r);
    gpuprobe_context_destroy(ctx);
    gpuprobe_bandwidth_options_destroy(o);
    return bad;
}
static int c_context_free(void)
{
    uint64_t v = 0;
    int64_t lo, hi;
    return gpuprobe_capacity_bytes(7000000000, GPUPROBE_DTYPE_FP16,
                                   GPUPROBE_WORKLOAD_TRAINING, &v) != GPUPROBE_OK ||
           gpuprobe_capacity_params(v, GPUPROBE_DTYPE_INT4,
                                    GPUPROBE_WORKLOAD_WEIGHTS, &v) != GPUPROBE_OK ||
           gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_M, &lo, &hi) != GPUPROBE_OK;
}

static const struct {
    const char *name;
    call_fn fn;
} calls[] = {
    {"context create/destroy", c_create},
    {"device_count", c_count},
    {"cuda_status", c_cuda_status},
    {"cuda versions", c_versions},
    {"every CPU attribute", c_attrs},
    {"device_memory (CPU)", c_memory},
    {"device_memory (simulated CUDA)", c_memory_simulated},
    {"device_capacity (CPU)", c_capacity},
    {"device_capacity (simulated CUDA)", c_capacity_simulated},
    {"select with requirements", c_select},
    {"select failures", c_select_failures},
    {"select (simulated CUDA)", c_select_simulated},
    {"matmul 24^3 fp32 (CPU)", c_matmul},
    {"bandwidth 64 KiB (CPU)", c_bandwidth},
    {"context-free calls", c_context_free},
};
#define NCALLS (sizeof calls / sizeof calls[0])

typedef struct job {
    call_fn fn;      /* one call, or NULL: all of them */
    int bad;
} job;

static void *runner(void *arg)
{
    job *j = arg;
    if (j->fn) {
        j->bad = j->fn();
    } else {
        /* The first call that fails, counted from 1. */
        for (size_t i = 0; i < NCALLS && !j->bad; i++)
            if (calls[i].fn())
                j->bad = (int)i + 1;
    }
    return NULL;
}

/* Stack bytes used by fn on a painted PAINTED-byte stack; -1 on failure. */
static long measure(call_fn fn, int *bad)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *stack = mmap(NULL, PAINTED, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    memset(stack, PATTERN, PAINTED);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, PAINTED);
    job j = {fn, 0};
    pthread_t t;
    int rc = pthread_create(&t, &attr, runner, &j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        munmap(stack, PAINTED);
        return -1;
    }
    pthread_join(t, NULL);
    READABLE(stack, PAINTED);
    size_t untouched = 0;
    while (untouched < PAINTED && stack[untouched] == PATTERN)
        untouched++;
    munmap(stack, PAINTED);
    (void)page;
    *bad = j.bad;
    return (long)(PAINTED - untouched);
}

static void each_call_under_budget(void **state)
{
    (void)state;
    int bad = 0;
    long base = measure(c_nothing, &bad);
    assert_true(base > 0);
    print_message("an empty thread function: %ld bytes (subtracted below)\n", base);
    long worst = 0;
    const char *worst_name = "";
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            /* The CUDA runtime loaded from a directory, when there is one. */
            if (access("/usr/local/cuda/lib64", F_OK) != 0)
                break;
            setenv("GPUPROBE_CUDA_LIBDIR", "/usr/local/cuda/lib64", 1);
            print_message("with GPUPROBE_CUDA_LIBDIR=/usr/local/cuda/lib64:\n");
        }
        for (size_t i = 0; i < NCALLS; i++) {
            long used = measure(calls[i].fn, &bad);
            assert_true(used > 0);
            if (bad)
                fail_msg("%s failed", calls[i].name);
            used -= base;
            print_message("  %-34s %6ld bytes\n", calls[i].name, used);
            if (used > worst) {
                worst = used;
                worst_name = calls[i].name;
            }
        }
    }
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    print_message("deepest: %s, %ld bytes of %d\n", worst_name, worst, BUDGET);
    if (worst >= BUDGET)
        fail_msg("%s uses %ld bytes of stack, over %d", worst_name, worst, BUDGET);
}

static void all_calls_on_32k_stack(void **state)
{
    (void)state;
    if (GP_ASAN) {
        /* AddressSanitizer refuses such a thread (its own frames and red
         * zones need more); the measurement above still holds. */
        print_message("AddressSanitizer build: no %d KiB thread\n", SMALL / KiB);
        skip();
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    assert_int_equal(pthread_attr_setstacksize(&attr, SMALL), 0);
    job j = {NULL, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, &attr, runner, &j), 0);
    pthread_attr_destroy(&attr);
    assert_int_equal(pthread_join(t, NULL), 0); /* a crash ends the test */
    if (j.bad)
        fail_msg("%s failed on a %d KiB stack", calls[j.bad - 1].name, SMALL / KiB);
}

int main(void)
{
    unsetenv("GPUPROBE_DEVICE");
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_call_under_budget),
        cmocka_unit_test(all_calls_on_32k_stack),
    };
    return cmocka_run_group_tests_name("stack", tests, NULL, NULL);
}
