/*
 * test_faults.c - fault injection through the test seams.
 *
 * - CUDA libraries missing, through gp_test_dlopen: the runtime
 *   (libcudart*), the driver (libcuda.so.1), everything, and cuBLAS while
 *   CUDA is usable (that one needs a working GPU: skipped elsewhere). Each
 *   gives the documented cause, a detail, clean errors from the CUDA-only
 *   calls, a working CPU fallback, and never a cuBLAS load outside matmul.
 * - The environment: GPUPROBE_CUDA=off loads nothing; a relative
 *   GPUPROBE_CUDA_LIBDIR is refused; an absolute one is the only place the
 *   runtime is looked for. Every name given to dlopen is a bare SONAME or
 *   an absolute path.
 * - Device out of memory through a simulated device (free memory below the
 *   context reserve, requirements that cannot fit).
 * - Host out of memory for a real CPU matmul, in a child process whose
 *   address space is limited (RLIMIT_AS).
 * - OpenBLAS's process-wide thread count is the same after every call,
 *   success or failure.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "unit_check.h"
#ifdef GPUPROBE_HAVE_CUDA
#include "cuda_loader.h"
#endif
#include "matmul_backend.h"

/* OpenBLAS (cblas.h declares them; declared here to keep the include set
 * small). */
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
char *openblas_get_config(void);

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||    \
    __has_feature(memory_sanitizer)
#define GP_SANITIZED 1
#endif
#endif
#ifndef GP_SANITIZED
#define GP_SANITIZED 0
#endif

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

/* ---- the dlopen seam ---- */

enum { PASS_ALL = 0, FAIL_ALL = 1, FAIL_MATCH = 2 };
static int seam_mode;
static const char *seam_pattern;
#define MAX_NAMES 64
static char seam_names[MAX_NAMES][512];
static size_t seam_calls;

static void *fake_dlopen(const char *file, int mode)
{
    if (seam_calls < MAX_NAMES)
        snprintf(seam_names[seam_calls], sizeof seam_names[0], "%s",
                 file ? file : "(null)");
    seam_calls++;
    if (seam_mode == FAIL_ALL)
        return NULL;
    if (seam_mode == FAIL_MATCH && file && strstr(file, seam_pattern))
        return NULL;
    return dlopen(file, mode);
}

static void seam(int mode, const char *pattern)
{
    seam_mode = mode;
    seam_pattern = pattern;
    seam_calls = 0;
    gp_test_dlopen = fake_dlopen;
}

static size_t seam_count(const char *needle)
{
    size_t n = 0;
    for (size_t i = 0; i < seam_calls && i < MAX_NAMES; i++)
        if (strstr(seam_names[i], needle))
            n++;
    return n;
}

/* Every name the library passes to dlopen is a bare SONAME (found by the
 * system loader) or an absolute path: never relative to the current
 * directory. */
static void assert_names_safe(void)
{
    for (size_t i = 0; i < seam_calls && i < MAX_NAMES; i++) {
        const char *n = seam_names[i];
        if (n[0] != '/' && strchr(n, '/') != NULL)
            fail_msg("dlopen(\"%s\"): a relative path", n);
        if (strncmp(n, "lib", 3) != 0 && n[0] != '/')
            fail_msg("dlopen(\"%s\"): not a library SONAME", n);
    }
}

static int blas_threads_before;

static int setup(void **state)
{
    (void)state;
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    unsetenv("GPUPROBE_DEVICE");
    gp_test_dlopen = NULL;
    gp_test_matmul_corrupt = NULL;
    blas_threads_before = openblas_get_num_threads();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gp_test_dlopen = NULL;
    gp_test_matmul_corrupt = NULL;
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    /* No call of the test changed OpenBLAS's process-wide thread count. */
    assert_int_equal(openblas_get_num_threads(), blas_threads_before);
    return 0;
}

/* The calls that need CUDA fail cleanly; the CPU path works. */
static void assert_cpu_fallback(gpuprobe_context *ctx, gpuprobe_cuda_cause want)
{
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)99;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    if (cause != want)
        fail_msg("cause %s, expected %s (detail: %s)",
                 gpuprobe_cuda_cause_name(cause), gpuprobe_cuda_cause_name(want),
                 detail ? detail : "(null)");
    assert_non_null(detail);
    assert_true(detail[0] != '\0');

    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 1);

    size_t dev = 99;
    const char *reason = NULL;
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL,
                                     GPUPROBE_SELECT_IGNORE_ENV, &dev, &reason),
                     GPUPROBE_OK);
    assert_int_equal(dev, 0);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "cpu"));

    static const char *const cuda_specs[] = {"cuda", "cuda:0"};
    for (size_t i = 0; i < 2; i++) {
        dev = 99;
        assert_int_equal(gpuprobe_select(ctx, cuda_specs[i], NULL,
                                         GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL),
                         GPUPROBE_ERR_CUDA_UNAVAILABLE);
        assert_int_equal(dev, 99);
        const char *msg = gpuprobe_last_error(ctx);
        /* The message gives the cause. */
        if (!strstr(msg, gpuprobe_cuda_cause_name(want)) &&
            !strstr(msg, gpuprobe_cuda_cause_string(want)))
            fail_msg("select(\"%s\") message does not give the cause: %s",
                     cuda_specs[i], msg);
    }

    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    assert_int_equal(gpuprobe_matmul_run(ctx, 1, NULL, 0, &r),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_null(r);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');

    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &mi, 0), GPUPROBE_OK);
    assert_true(mi.total_bytes > 0);
}

static void create_loads_nothing(void **state)
{
    (void)state;
    seam(FAIL_ALL, NULL);
    gpuprobe_context *ctx = new_ctx();
    assert_int_equal(seam_calls, 0);
    gpuprobe_context_destroy(ctx);
    assert_int_equal(seam_calls, 0);
}

static void runtime_missing(void **state)
{
    (void)state;
#ifndef GPUPROBE_HAVE_CUDA
    skip(); /* nothing is loaded at all: the cause is not_built (test_cuda) */
#endif
    seam(FAIL_MATCH, "libcudart");
    gpuprobe_context *ctx = new_ctx();
    assert_cpu_fallback(ctx, GPUPROBE_CUDA_NO_RUNTIME);
    const char *detail = NULL;
    gpuprobe_cuda_cause cause;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_non_null(strstr(detail, "libcudart"));

    int v = -7;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(v, -7);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &v),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(v, -7);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');

    assert_true(seam_count("libcudart") >= 1);
    assert_int_equal(seam_count("cublas"), 0); /* never outside a GPU matmul */
    assert_names_safe();
    gpuprobe_context_destroy(ctx);
}

static int runtime_loadable(void)
{
    static const char *const names[] = {"libcudart.so.13", "libcudart.so.12",
                                        "libcudart.so.11"};
    for (size_t i = 0; i < 3; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            return 1;
        }
    }
    return 0;
}

static void driver_missing(void **state)
{
    (void)state;
#ifndef GPUPROBE_HAVE_CUDA
    skip();
#endif
    if (!runtime_loadable()) {
        print_message("no CUDA runtime on this machine: the driver-missing "
                      "case is not reachable here\n");
        skip();
    }
    seam(FAIL_MATCH, "libcuda.so");
    gpuprobe_context *ctx = new_ctx();
    assert_cpu_fallback(ctx, GPUPROBE_CUDA_NO_DRIVER);
    /* The loader gave no reason beyond "cannot open": the detail says the
     * driver is not installed and adds nothing in parentheses. */
    const char *detail = NULL;
    gpuprobe_cuda_cause cause;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_string_equal(detail, "libcuda.so.1 was not found by the system loader");
    int v = -7;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_true(v >= 10000);
    v = -7;
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &v),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_int_equal(v, -7);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    assert_true(seam_count("libcuda.so.1") >= 1);
    assert_int_equal(seam_count("cublas"), 0);
    assert_names_safe();
    gpuprobe_context_destroy(ctx);
}

static void everything_missing(void **state)
{
    (void)state;
    seam(FAIL_ALL, NULL);
    gpuprobe_context *ctx = new_ctx();
#ifdef GPUPROBE_HAVE_CUDA
    assert_cpu_fallback(ctx, GPUPROBE_CUDA_NO_RUNTIME);
    assert_true(seam_calls >= 1);
#else
    assert_cpu_fallback(ctx, GPUPROBE_CUDA_NOT_BUILT);
#endif
    assert_names_safe();
    /* Asking again does not retry the loader (the answer is cached). */
    size_t calls = seam_calls;
    gpuprobe_cuda_cause cause;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, NULL), GPUPROBE_OK);
    assert_int_equal(seam_calls, calls);
    /* cuBLAS cannot be loaded when CUDA is not usable: a clean error. */
    assert_int_equal(gp_cuda_load_cublas(ctx), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    assert_int_equal(seam_count("cublas"), 0);
    gpuprobe_context_destroy(ctx);
}

static void disabled_by_env(void **state)
{
    (void)state;
    static const char *const off[] = {"off", "0", "FALSE", "No", "disable"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        seam(FAIL_ALL, NULL);
        setenv("GPUPROBE_CUDA", off[i], 1);
        gpuprobe_context *ctx = new_ctx();
        unsetenv("GPUPROBE_CUDA"); /* read at create: must not matter now */
        assert_cpu_fallback(ctx, GPUPROBE_CUDA_DISABLED);
        assert_int_equal(seam_calls, 0);
        gpuprobe_context_destroy(ctx);
    }
}

static void libdir_relative_refused(void **state)
{
    (void)state;
#ifndef GPUPROBE_HAVE_CUDA
    skip();
#endif
    static const char *const rel[] = {"lib64", "./lib64", "../cuda/lib64"};
    for (size_t i = 0; i < 3; i++) {
        seam(PASS_ALL, NULL);
        setenv("GPUPROBE_CUDA_LIBDIR", rel[i], 1);
        gpuprobe_context *ctx = new_ctx();
        unsetenv("GPUPROBE_CUDA_LIBDIR");
        assert_cpu_fallback(ctx, GPUPROBE_CUDA_OTHER);
        const char *detail = NULL;
        gpuprobe_cuda_cause cause;
        assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
        assert_non_null(strstr(detail, "GPUPROBE_CUDA_LIBDIR"));
        assert_int_equal(seam_count(rel[i]), 0); /* never even tried */
        assert_names_safe();
        gpuprobe_context_destroy(ctx);
    }
}

static void libdir_absolute_only_place(void **state)
{
    (void)state;
#ifndef GPUPROBE_HAVE_CUDA
    skip();
#endif
    seam(PASS_ALL, NULL);
    setenv("GPUPROBE_CUDA_LIBDIR", "/nonexistent-gpuprobe-dir", 1);
    gpuprobe_context *ctx = new_ctx();
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    assert_cpu_fallback(ctx, GPUPROBE_CUDA_NO_RUNTIME);
    size_t rt = seam_count("libcudart");
    assert_true(rt >= 1);
    /* Every runtime name was in that directory: no silent fallback to the
     * system loader path. */
    assert_int_equal(seam_count("/nonexistent-gpuprobe-dir/libcudart"), rt);
    assert_names_safe();
    gpuprobe_context_destroy(ctx);

    /* An over-long value is refused, not truncated into another path. */
    char *longdir = malloc(GP_PATH_LEN + 64);
    assert_non_null(longdir);
    longdir[0] = '/';
    memset(longdir + 1, 'd', GP_PATH_LEN + 62);
    longdir[GP_PATH_LEN + 63] = '\0';
    seam(PASS_ALL, NULL);
    setenv("GPUPROBE_CUDA_LIBDIR", longdir, 1);
    ctx = new_ctx();
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    free(longdir);
    assert_cpu_fallback(ctx, GPUPROBE_CUDA_OTHER);
    assert_int_equal(seam_count("libcudart"), 0);
    gpuprobe_context_destroy(ctx);

    /* At the bound: "<dir>/libcudart.so.NN" of exactly GP_PATH_LEN bytes
     * leaves no room for its NUL and is never opened; one byte shorter,
     * it is tried. */
    size_t file = strlen("/libcudart.so.12");
    for (size_t len = GP_PATH_LEN - file - 1; len <= GP_PATH_LEN - file; len++) {
        char *dir = malloc(len + 1);
        assert_non_null(dir);
        dir[0] = '/';
        memset(dir + 1, 'd', len - 1);
        dir[len] = '\0';
        seam(PASS_ALL, NULL);
        setenv("GPUPROBE_CUDA_LIBDIR", dir, 1);
        ctx = new_ctx();
        unsetenv("GPUPROBE_CUDA_LIBDIR");
        free(dir);
        gpuprobe_cuda_cause cause;
        assert_int_equal(gpuprobe_cuda_status(ctx, &cause, NULL), GPUPROBE_OK);
        size_t tried = seam_count("/dddddddd"); /* names are kept cut to 511 bytes */
        if (len + file < GP_PATH_LEN)
            assert_true(tried >= 1);
        else
            assert_int_equal(tried, 0);
        assert_names_safe();
        gpuprobe_context_destroy(ctx);
    }
}

/* With CUDA usable (a real GPU), cuBLAS missing makes the GPU matmul fail
 * with CUDA_UNAVAILABLE and a message naming it; the CPU still works. */
static void cublas_missing(void **state)
{
    (void)state;
    gpuprobe_context *probe = new_ctx();
    gpuprobe_cuda_cause cause;
    assert_int_equal(gpuprobe_cuda_status(probe, &cause, NULL), GPUPROBE_OK);
    gpuprobe_context_destroy(probe);
    if (cause != GPUPROBE_CUDA_AVAILABLE) {
        print_message("CUDA not usable here (%s): the cuBLAS-missing case "
                      "needs a working GPU\n", gpuprobe_cuda_cause_name(cause));
        skip();
    }
    seam(FAIL_MATCH, "libcublas");
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 64), GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 1, o, 0, &r),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_null(r);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "cublas"));
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* ---- device out of memory, simulated ---- */

static const gp_fake_cuda_device tight_devs[] = {
    {"Fake small", 7, 5, 4 * GiB, 100 * MiB, 0},   /* free < default reserve */
    {"Fake busy", 8, 0, 16 * GiB, 2 * GiB, 300 * MiB},
};
static const gp_fake_cuda tight = {GPUPROBE_CUDA_AVAILABLE, "tight", 2, tight_devs};

static void device_out_of_memory(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &tight);

    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(ctx, 1, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);
    assert_int_equal(cap.free_bytes, 100 * MiB);
    assert_true(cap.reserve_bytes > cap.free_bytes);
    assert_int_equal(cap.usable_bytes, 0); /* never below 0 */
    assert_int_equal(cap.max_params, 0);

    /* Nothing fits 1 B fp16 parameters: NO_FIT naming both devices. */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 1000000000;
    size_t dev = 99;
    assert_int_equal(gpuprobe_select(ctx, "cuda", &req,
                                     GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL),
                     GPUPROBE_ERR_NO_FIT);
    assert_int_equal(dev, 99);
    const char *msg = gpuprobe_last_error(ctx);
    assert_non_null(strstr(msg, "cuda:0"));
    assert_non_null(strstr(msg, "cuda:1"));

    /* More free memory than any device has. */
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 64 * GiB;
    assert_int_equal(gpuprobe_select(ctx, "cuda:1", &req,
                                     GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL),
                     GPUPROBE_ERR_NO_FIT);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');

    /* `auto` skips the device whose free memory is below the reserve and
     * takes the one where 100 M fp16 parameters (200 MB) fit after its
     * measured 300 MiB context. */
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 100000000;
    const char *reason = NULL;
    assert_int_equal(gpuprobe_select(ctx, "auto", &req,
                                     GPUPROBE_SELECT_IGNORE_ENV, &dev, &reason),
                     GPUPROBE_OK);
    assert_int_equal(dev, 2);
    assert_non_null(reason);

    /* A matmul cannot run on a simulated device: a clean error, and the
     * context's CUDA answer is still the simulated one afterwards (the
     * failed call must not load the real CUDA libraries over it). */
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 1, NULL, 0, &r);
    assert_true(st == GPUPROBE_ERR_CUDA_UNAVAILABLE || st == GPUPROBE_ERR_UNSUPPORTED);
    assert_null(r);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)77;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, NULL), GPUPROBE_OK);
    if (cause != GPUPROBE_CUDA_AVAILABLE)
        fail_msg("after a matmul on a simulated device the context reports "
                 "CUDA %s instead of the simulated 'available'",
                 gpuprobe_cuda_cause_name(cause));
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 3);
    gpuprobe_context_destroy(ctx);
}

/* ---- host out of memory, real ---- */

static void host_out_of_memory(void **state)
{
    (void)state;
    if (GP_SANITIZED) {
        print_message("sanitizer build: an address-space limit would break "
                      "the sanitizer runtime, not the library\n");
        skip();
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60); /* never hang the suite */
        gpuprobe_context *ctx = NULL;
        if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
            _exit(10);
        gpuprobe_matmul_options *o = NULL;
        if (gpuprobe_matmul_options_create(&o) != GPUPROBE_OK)
            _exit(11);
        /* 3 x 40000^2 x 4 bytes = 19 GB, far above the limit below. */
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 40000);
        size_t n = 0;
        if (gpuprobe_device_count(ctx, &n) != GPUPROBE_OK)
            _exit(12);
        /* Limit the address space to what is mapped now + 256 MiB + 140
         * MiB per CPU: room for a small run (OpenBLAS's pool was stopped by
         * the fork and restarts: a 128 MiB buffer for the caller and a
         * buffer and an 8 MiB stack for each pool thread, at most one per
         * CPU), far from 40000^2 x 3. */
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%ld", &pages) != 1)
            _exit(13);
        fclose(f);
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max =
            (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + 256 * MiB +
            (rlim_t)sysconf(_SC_NPROCESSORS_CONF) * 140 * MiB;
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(14);
        gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
        gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
        if (st != GPUPROBE_ERR_OUT_OF_MEMORY) {
            fprintf(stderr, "matmul under RLIMIT_AS: %s (%s)\n",
                    gpuprobe_status_name(st), gpuprobe_last_error(ctx));
            _exit(20);
        }
        if (r != NULL)
            _exit(21);
        if (gpuprobe_last_error(ctx)[0] == '\0')
            _exit(22);
        /* The context still works: a small matmul fits. */
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 32);
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 1);
        st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
        if (st != GPUPROBE_OK) {
            fprintf(stderr, "small matmul after OOM: %s (%s)\n",
                    gpuprobe_status_name(st), gpuprobe_last_error(ctx));
            _exit(23);
        }
        gpuprobe_matmul_result_destroy(r);
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
        exit(0); /* not _exit(): a coverage build writes its counts at exit */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status))
        fail_msg("child killed by signal %d", WTERMSIG(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("child failed with code %d", WEXITSTATUS(status));
}

/* ---- OpenBLAS thread count ---- */

static int corrupt_calls;
static void corrupt_nan(void *c, gp_elem ec, int64_t m, int64_t n)
{
    corrupt_calls++;
    /* Poison the whole output: any sampled entry is NaN. */
    for (int64_t i = 0; i < m * n; i++)
        gp_elem_set(c, ec, (size_t)i, NAN);
}

static gpuprobe_status small_run(gpuprobe_context *ctx, int threads, int dtype,
                                 gpuprobe_matmul_result **r)
{
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 48), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, threads), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dtype), GPUPROBE_OK);
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, r);
    gpuprobe_matmul_options_destroy(o);
    return st;
}

static void blas_threads_restored(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    int start = openblas_get_num_threads();
    /* A value of our own, so "restored" cannot pass by coincidence. */
    int base = start > 1 ? start - 1 : 1;
    openblas_set_num_threads(base);
    base = openblas_get_num_threads();

    static const int asks[] = {0, 1, 2, 3};
    for (size_t i = 0; i < 4; i++) {
        gpuprobe_matmul_result *r = NULL;
        assert_int_equal(small_run(ctx, asks[i], GPUPROBE_DTYPE_FP32, &r), GPUPROBE_OK);
        int64_t used = -1;
        assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_THREADS, &used),
                         GPUPROBE_OK);
        assert_true(used >= 1);
        gpuprobe_matmul_result_destroy(r);
        assert_int_equal(openblas_get_num_threads(), base);
    }

    /* Failure paths: verification failure (result still returned)... */
    gp_test_matmul_corrupt = corrupt_nan;
    corrupt_calls = 0;
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(small_run(ctx, 2, GPUPROBE_DTYPE_FP64, &r),
                     GPUPROBE_ERR_VERIFY_FAILED);
    gp_test_matmul_corrupt = NULL;
    assert_true(corrupt_calls >= 1);
    assert_non_null(r);
    int64_t verified = 7;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_VERIFIED, &verified),
                     GPUPROBE_OK);
    assert_int_equal(verified, 0);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    gpuprobe_matmul_result_destroy(r);
    assert_int_equal(openblas_get_num_threads(), base);

    /* ...and an early refusal. */
    r = (gpuprobe_matmul_result *)&r;
    assert_int_equal(small_run(ctx, 2, GPUPROBE_DTYPE_FP16, &r),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_null(r);
    assert_int_equal(openblas_get_num_threads(), base);

    /* Queries do not touch it either. */
    int64_t v = 0;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &v),
                     GPUPROBE_OK);
    assert_int_equal(v, base);
    assert_int_equal(openblas_get_num_threads(), base);

    openblas_set_num_threads(start);
    gpuprobe_context_destroy(ctx);
}

/* OpenBLAS missing: it is opened only when a CPU matmul or a BLAS attribute
 * needs it, and its absence is a named UNSUPPORTED, while everything else
 * (enumeration, memory, capacity, selection) keeps working. */
static void openblas_missing(void **state)
{
    (void)state;
    seam(FAIL_MATCH, "libopenblas");
    gpuprobe_context *ctx = new_ctx();

    size_t n = 0, dev = 99;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_true(n >= 1);
    assert_int_equal(seam_count("libopenblas"), 0); /* not needed yet */
    assert_int_equal(gpuprobe_select(ctx, "cpu", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, NULL),
                     GPUPROBE_OK);
    assert_int_equal(dev, 0);
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);
    assert_true(cap.max_params > 0);
    assert_int_equal(seam_count("libopenblas"), 0);
    /* The CPU's other strings need no OpenBLAS. */
    const char *s = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &s), GPUPROBE_OK);
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_SPEC, &s), GPUPROBE_OK);
    assert_string_equal(s, "cpu");
    assert_int_equal(seam_count("libopenblas"), 0);
    /* BLAS_CONFIG asked first needs it as BLAS_CORE does: the same refusal. */
    const char *config = "untouched";
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CONFIG, &config),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_string_equal(config, "untouched");
    assert_non_null(strstr(gpuprobe_last_error(ctx), "libopenblas.so.0"));
    assert_true(seam_count("libopenblas") >= 1);

    const char *core = "untouched";
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_string_equal(core, "untouched");
    assert_non_null(strstr(gpuprobe_last_error(ctx), "libopenblas.so.0"));
    int64_t threads = -7;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &threads),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(threads, -7);

    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 16), GPUPROBE_OK);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&r;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_null(r);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "libopenblas.so.0"));
    assert_true(seam_count("libopenblas") >= 1);
    assert_names_safe();
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);

    /* With the library back, a new context runs the same matmul. */
    seam(PASS_ALL, NULL);
    ctx = new_ctx();
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 16), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* An empty GPUPROBE_CUDA_LIBDIR is the same as none: the runtime is looked
 * for by the system loader, with the same answer. */
static void libdir_empty_is_unset(void **state)
{
    (void)state;
    seam(PASS_ALL, NULL);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_cuda_cause unset_cause;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &unset_cause, &detail), GPUPROBE_OK);
    char unset_detail[GP_ERR_LEN];
    gp_strlcpy(unset_detail, detail, sizeof unset_detail);
    size_t unset_calls = seam_calls;
    gpuprobe_context_destroy(ctx);

    seam(PASS_ALL, NULL);
    setenv("GPUPROBE_CUDA_LIBDIR", "", 1);
    ctx = new_ctx();
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    gpuprobe_cuda_cause cause;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_int_equal(cause, unset_cause);
    assert_string_equal(detail, unset_detail);
    assert_int_equal(seam_calls, unset_calls);
    /* Bare SONAMEs only: never "/libcudart..." from an empty directory. */
    for (size_t i = 0; i < seam_calls && i < MAX_NAMES; i++)
        assert_int_equal(strchr(seam_names[i], '/'), NULL);
    gpuprobe_context_destroy(ctx);
}

/* GPUPROBE_MATMUL_CPU_THREADS = 1024: OpenBLAS caps it at its MAX_THREADS
 * (64 in Debian's build) and starts that many threads, which stay for the
 * rest of the process; the count in force is restored. Runs last: the
 * threads it leaves would change what the fork cases above must fit. */
static void threads_1024(void **state)
{
    (void)state;
    const char *config = openblas_get_config();
    const char *p = strstr(config, "MAX_THREADS=");
    if (!p) {
        print_message("OpenBLAS does not say its MAX_THREADS (%s)\n", config);
        skip();
    }
    int max = atoi(p + 12);
    int before = openblas_get_num_threads();
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(small_run(ctx, 1024, GPUPROBE_DTYPE_FP32, &r), GPUPROBE_OK);
    int64_t used = 0;
    assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_THREADS, &used),
                     GPUPROBE_OK);
    assert_int_equal(used, max);
    gpuprobe_matmul_result_destroy(r);
    assert_int_equal(openblas_get_num_threads(), before); /* restored */
    /* ... while the pool keeps its threads (blas_num_threads: the threads
     * it holds, counting the caller; a variable of the pthread build). */
    const int *pool = dlsym(RTLD_DEFAULT, "blas_num_threads");
    if (pool)
        assert_int_equal(*pool, max);
    else
        print_message("this OpenBLAS does not show its pool size\n");
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(create_loads_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(runtime_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(everything_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(disabled_by_env, setup, teardown),
        cmocka_unit_test_setup_teardown(libdir_relative_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(libdir_absolute_only_place, setup, teardown),
        cmocka_unit_test_setup_teardown(cublas_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(device_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(host_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(blas_threads_restored, setup, teardown),
        cmocka_unit_test_setup_teardown(openblas_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(libdir_empty_is_unset, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_1024, setup, teardown),
    };
    return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
