/*
 * test_cuda.c - the CUDA cause decision, on whatever machine this runs.
 *
 * The expectations are derived from facts the test checks itself: whether
 * libcuda.so.1 and some libcudart.so.N can be opened. On a machine with the
 * CUDA toolkit but no driver (the usual CI case) the cause must be
 * NO_DRIVER and the CPU must still work; with a real GPU (cause AVAILABLE)
 * the device attributes must be sane. Fault injection through the
 * gp_test_dlopen seam covers the other load failures.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "unit_check.h"
#ifdef GPUPROBE_HAVE_CUDA
#include "cuda_loader.h"
#endif

static gpuprobe_cuda_cause cause_of(gpuprobe_context *ctx, const char **detail)
{
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)-1;
    const char *d = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &d), GPUPROBE_OK);
    assert_non_null(d);
    if (detail)
        *detail = d;
    print_message("cause %s: %s\n", gpuprobe_cuda_cause_name(cause), d);
    return cause;
}

/* The CPU is always device 0, whatever CUDA says. */
static void assert_cpu_works(gpuprobe_context *ctx)
{
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_true(n >= 1);
    int64_t kind = -1;
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_KIND, &kind), GPUPROBE_OK);
    assert_int_equal(kind, GPUPROBE_DEVICE_CPU);
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);
    assert_true(info.total_bytes > 0);
}

static void assert_unavailable_versions(gpuprobe_context *ctx, int runtime_known)
{
    int v = 0;
    gpuprobe_status st = gpuprobe_cuda_runtime_version(ctx, &v);
    if (runtime_known) {
        assert_int_equal(st, GPUPROBE_OK);
        assert_true(v >= 1000);
    } else {
        assert_int_equal(st, GPUPROBE_ERR_CUDA_UNAVAILABLE);
        assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    }
}

static void with_env(const char *name, const char *value)
{
    if (value)
        assert_int_equal(setenv(name, value, 1), 0);
    else
        unsetenv(name);
}

static void test_disabled(void **state)
{
    (void)state;
    with_env("GPUPROBE_CUDA", "off");
    gpuprobe_context *ctx = new_ctx();
    with_env("GPUPROBE_CUDA", NULL);
    assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_DISABLED);
    assert_cpu_works(ctx);
    assert_unavailable_versions(ctx, 0);
    int v;
    assert_int_equal(gpuprobe_cuda_driver_version(ctx, &v), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    gpuprobe_context_destroy(ctx);

    with_env("GPUPROBE_CUDA", "FALSE");
    ctx = new_ctx();
    with_env("GPUPROBE_CUDA", NULL);
    assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_DISABLED);
    gpuprobe_context_destroy(ctx);
}

/* Counts the libraries the loader tries, and finds none. */
static size_t opens_tried;
static void *no_dlopen(const char *file, int mode)
{
    (void)file;
    (void)mode;
    opens_tried++;
    return NULL;
}

/* Only the documented values turn CUDA off (0, off, no, false, disable,
 * disabled, in any case); anything else, "1" and "on" included, leaves it
 * on: the loader runs and the cause is its answer. */
static void test_env_values(void **state)
{
    (void)state;
    static const char *const off[] = {"0", "off", "no", "false", "disable",
                                      "disabled", "OFF", "Disabled", "nO"};
    /* "" is the same as unset. */
    static const char *const on[] = {"1", "on", "yes", "true", "enable", "enabled",
                                     "ON", "Yes", ""};
    gp_test_dlopen = no_dlopen;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        with_env("GPUPROBE_CUDA", off[i]);
        gpuprobe_context *ctx = new_ctx();
        with_env("GPUPROBE_CUDA", NULL);
        opens_tried = 0;
        if (cause_of(ctx, NULL) != GPUPROBE_CUDA_DISABLED)
            fail_msg("GPUPROBE_CUDA=\"%s\" did not turn CUDA off", off[i]);
        assert_int_equal(opens_tried, 0);
        gpuprobe_context_destroy(ctx);
    }
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        with_env("GPUPROBE_CUDA", on[i]);
        gpuprobe_context *ctx = new_ctx();
        with_env("GPUPROBE_CUDA", NULL);
        opens_tried = 0;
        gpuprobe_cuda_cause cause = cause_of(ctx, NULL);
        if (cause == GPUPROBE_CUDA_DISABLED)
            fail_msg("GPUPROBE_CUDA=\"%s\" turned CUDA off", on[i]);
#ifdef GPUPROBE_HAVE_CUDA
        assert_int_equal(cause, GPUPROBE_CUDA_NO_RUNTIME);
        assert_true(opens_tried >= 1);
#else
        assert_int_equal(cause, GPUPROBE_CUDA_NOT_BUILT);
#endif
        gpuprobe_context_destroy(ctx);
    }
    gp_test_dlopen = NULL;
}

/* A value that is neither on nor off is never taken for either: every
 * call that enumerates fails, naming the variable and its value (quoted),
 * and nothing is loaded. */
static void test_env_values_unknown(void **state)
{
    (void)state;
    static const char *const bad[] = {"of", "offf", "00", " off", "disabledx", "maybe",
                                      "garbage\x1b[31m"};
    static const char *const vars[] = {"GPUPROBE_CUDA", "GPUPROBE_NVML"};
    gp_test_dlopen = no_dlopen;
    for (size_t v = 0; v < 2; v++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            with_env(vars[v], bad[i]);
            gpuprobe_context *ctx = new_ctx(); /* creating still works */
            with_env(vars[v], NULL);
            opens_tried = 0;
            gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
            size_t n = 99;
            assert_int_equal(gpuprobe_cuda_status(ctx, &cause, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
            const char *msg = gpuprobe_last_error(ctx);
            print_message("%s=\"%s\": %s\n", vars[v], bad[i], msg);
            assert_non_null(strstr(msg, vars[v]));
            assert_non_null(strstr(msg, "neither on"));
            assert_null(strchr(msg, '\x1b')); /* quoted */
            assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_ERR_INVALID_ARGUMENT);
            assert_int_equal(n, 99);
            assert_int_equal(opens_tried, 0);
            gpuprobe_context_destroy(ctx);
        }
    }
    /* Read once, at creation: setting it later changes nothing. */
    gpuprobe_context *ctx = new_ctx();
    with_env("GPUPROBE_CUDA", "maybe");
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    with_env("GPUPROBE_CUDA", NULL);
    gpuprobe_context_destroy(ctx);
    gp_test_dlopen = NULL;
}

#ifdef GPUPROBE_HAVE_CUDA

/* Facts about this machine, found without the library. */
static int machine_has_runtime(void)
{
    static const int majors[] = {13, 12, 11};
    for (size_t i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "libcudart.so.%d", majors[i]);
        void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            return 1;
        }
    }
    return 0;
}

static int machine_has_driver_lib(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        return 1;
    }
    return 0;
}

static int cublas_loaded(void)
{
    static const int majors[] = {13, 12, 11};
    for (size_t i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "libcublas.so.%d", majors[i]);
        void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            dlclose(h);
            return 1;
        }
    }
    return 0;
}

static void test_machine_cause(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    const char *detail;
    gpuprobe_cuda_cause cause = cause_of(ctx, &detail);
    int rt = machine_has_runtime(), drv = machine_has_driver_lib();
    print_message("machine: runtime %s, libcuda.so.1 %s\n", rt ? "yes" : "no",
                  drv ? "yes" : "no");
    if (!rt) {
        assert_int_equal(cause, GPUPROBE_CUDA_NO_RUNTIME);
        assert_non_null(strstr(detail, "libcudart.so."));
        assert_unavailable_versions(ctx, 0);
    } else if (!drv) {
        assert_int_equal(cause, GPUPROBE_CUDA_NO_DRIVER);
        assert_non_null(strstr(detail, "libcuda.so.1"));
        assert_unavailable_versions(ctx, 1);
        int v;
        assert_int_equal(gpuprobe_cuda_driver_version(ctx, &v), GPUPROBE_ERR_CUDA_UNAVAILABLE);
        size_t n;
        assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_int_equal(n, 1);
    } else if (cause == GPUPROBE_CUDA_AVAILABLE) {
        size_t n = 0;
        assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
        assert_true(n >= 2);
        int dv = 0, rv = 0;
        assert_int_equal(gpuprobe_cuda_driver_version(ctx, &dv), GPUPROBE_OK);
        assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &rv), GPUPROBE_OK);
        assert_true(dv / 1000 >= rv / 1000);
        for (size_t i = 1; i < n; i++) {
            const char *s;
            int64_t v;
            assert_int_equal(gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &s),
                             GPUPROBE_OK);
            assert_true(strlen(s) > 0);
            print_message("device %zu: %s\n", i, s);
            assert_int_equal(gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_UUID, &s),
                             GPUPROBE_OK);
            assert_int_equal(strlen(s), 40);
            assert_memory_equal(s, "GPU-", 4);
            for (size_t k = 4; k < 40; k++) {
                if (k == 12 || k == 17 || k == 22 || k == 27)
                    assert_int_equal(s[k], '-');
                else
                    assert_true(isxdigit((unsigned char)s[k]));
            }
            assert_int_equal(gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_PCI_BUS_ID, &s),
                             GPUPROBE_OK);
            assert_non_null(strchr(s, ':'));
            assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MAJOR, &v),
                             GPUPROBE_OK);
            assert_true(v >= 3);
            assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_MULTIPROCESSORS, &v),
                             GPUPROBE_OK);
            assert_true(v > 0);
            assert_int_equal(gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY, &v),
                             GPUPROBE_OK);
            assert_true(v > 0);
            gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
            assert_int_equal(gpuprobe_device_memory(ctx, i, &info, 0), GPUPROBE_OK);
            assert_true(info.available_bytes > 0);
            assert_true(info.available_bytes <= info.total_bytes);
            assert_int_equal(info.total_bytes, (uint64_t)v);
            print_message("device %zu: free %llu of %llu, context %llu, flags %u\n", i,
                          (unsigned long long)info.available_bytes,
                          (unsigned long long)info.total_bytes,
                          (unsigned long long)info.context_bytes, info.flags);
            /* a second query finds the context in place */
            gpuprobe_memory_info again = GPUPROBE_MEMORY_INFO_INIT;
            assert_int_equal(gpuprobe_device_memory(ctx, i, &again, 0), GPUPROBE_OK);
            assert_int_equal(again.flags & GPUPROBE_MEMORY_CREATED_CONTEXT, 0);
        }
    } else {
        /* libcuda present but CUDA unusable: any named cause but these */
        assert_int_not_equal(cause, GPUPROBE_CUDA_NOT_BUILT);
        assert_int_not_equal(cause, GPUPROBE_CUDA_NO_RUNTIME);
        assert_int_not_equal(cause, GPUPROBE_CUDA_NO_DRIVER);
        assert_true(strlen(detail) > 0);
    }
    assert_cpu_works(ctx);
    /* enumeration and memory queries never load cuBLAS */
    assert_false(cublas_loaded());
    gpuprobe_context_destroy(ctx);
}

static void test_empty_libdir(void **state)
{
    (void)state;
    char dir[] = "/tmp/gpuprobe-cuda-XXXXXX";
    assert_non_null(mkdtemp(dir));
    with_env("GPUPROBE_CUDA_LIBDIR", dir);
    gpuprobe_context *ctx = new_ctx();
    with_env("GPUPROBE_CUDA_LIBDIR", NULL);
    const char *detail;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_RUNTIME);
    assert_non_null(strstr(detail, dir));
    assert_non_null(strstr(detail, "libcudart.so."));
    assert_cpu_works(ctx);
    assert_unavailable_versions(ctx, 0);
    gpuprobe_context_destroy(ctx);
    rmdir(dir);
}

/* A directory that fits GPUPROBE_CUDA_LIBDIR (under 4096 bytes) but
 * leaves no room for "/libcudart.so.13" in a path: no runtime, and the
 * detail says the path was too long rather than what the loader said. */
static void test_libdir_path_too_long(void **state)
{
    (void)state;
    char dir[GP_PATH_LEN - 10];
    memset(dir, 'd', sizeof dir - 1);
    dir[0] = '/';
    dir[sizeof dir - 1] = '\0';
    with_env("GPUPROBE_CUDA_LIBDIR", dir);
    gpuprobe_context *ctx = new_ctx();
    with_env("GPUPROBE_CUDA_LIBDIR", NULL);
    const char *detail;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_RUNTIME);
    assert_non_null(strstr(detail, "(path too long)"));
    assert_cpu_works(ctx);
    gpuprobe_context_destroy(ctx);
}

static void test_relative_libdir(void **state)
{
    (void)state;
    with_env("GPUPROBE_CUDA_LIBDIR", "lib64");
    gpuprobe_context *ctx = new_ctx();
    with_env("GPUPROBE_CUDA_LIBDIR", NULL);
    const char *detail;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_OTHER);
    assert_non_null(strstr(detail, "absolute"));
    assert_non_null(strstr(detail, "lib64"));
    assert_cpu_works(ctx);
    gpuprobe_context_destroy(ctx);
}

/* The directory the system loader takes libcudart.so.N from, as a LIBDIR. */
static void test_libdir_of_real_runtime(void **state)
{
    (void)state;
    gpuprobe_context *ref = new_ctx();
    gpuprobe_cuda_cause want = cause_of(ref, NULL);
    if (!ref->cuda || !ref->cuda->rt_lib) {
        gpuprobe_context_destroy(ref);
        skip();
    }
    void *fn = dlsym(ref->cuda->rt_lib, "cudaRuntimeGetVersion");
    Dl_info info;
    assert_non_null(fn);
    assert_int_not_equal(dladdr(fn, &info), 0);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (!slash || dir[0] != '/') {
        gpuprobe_context_destroy(ref);
        skip();
    }
    *slash = '\0';
    int rv_ref = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ref, &rv_ref), GPUPROBE_OK);

    with_env("GPUPROBE_CUDA_LIBDIR", dir);
    gpuprobe_context *ctx = new_ctx();
    with_env("GPUPROBE_CUDA_LIBDIR", NULL);
    assert_int_equal(cause_of(ctx, NULL), want);
    int rv = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &rv), GPUPROBE_OK);
    assert_int_equal(rv, rv_ref);
    assert_non_null(strstr(ctx->cuda->rt_name, dir));
    gpuprobe_context_destroy(ctx);
    gpuprobe_context_destroy(ref);
}

/* ---- fault injection ---- */

static const char *deny_pattern;

static void *deny_dlopen(const char *file, int mode)
{
    if (deny_pattern && strstr(file, deny_pattern))
        return NULL;
    return dlopen(file, mode);
}

static void test_fault_no_runtime(void **state)
{
    (void)state;
    deny_pattern = "libcudart";
    gp_test_dlopen = deny_dlopen;
    gpuprobe_context *ctx = new_ctx();
    const char *detail;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_RUNTIME);
    /* the detail lists what was tried */
    char own[32];
    snprintf(own, sizeof own, "libcudart.so.%d", CUDART_VERSION / 1000);
    assert_non_null(strstr(detail, own));
    assert_non_null(strstr(detail, "libcudart.so.12"));
    assert_non_null(strstr(detail, "libcudart.so.11"));
    assert_cpu_works(ctx);
    gp_test_dlopen = NULL;
    gpuprobe_context_destroy(ctx);
}

static void test_fault_no_driver(void **state)
{
    (void)state;
    if (!machine_has_runtime())
        skip();
    deny_pattern = "libcuda.so.1";
    gp_test_dlopen = deny_dlopen;
    gpuprobe_context *ctx = new_ctx();
    const char *detail;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_DRIVER);
    assert_non_null(strstr(detail, "libcuda.so.1"));
    assert_cpu_works(ctx);
    assert_unavailable_versions(ctx, 1);
    gp_test_dlopen = NULL;
    gpuprobe_context_destroy(ctx);
    deny_pattern = NULL;
}

static void test_cublas_needs_cuda(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    if (cause_of(ctx, NULL) == GPUPROBE_CUDA_AVAILABLE) {
        gpuprobe_context_destroy(ctx);
        skip();
    }
    assert_int_equal(gp_cuda_load_cublas(ctx), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    assert_false(cublas_loaded());
    gpuprobe_context_destroy(ctx);
}

#else /* no CUDA in this build */

static void test_not_built(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    const char *detail;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NOT_BUILT);
    assert_true(strlen(detail) > 0);
    assert_cpu_works(ctx);
    assert_unavailable_versions(ctx, 0);
    size_t n;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 1);
    gpuprobe_context_destroy(ctx);
}

#endif

int main(void)
{
    /* The cause depends on CUDA_VISIBLE_DEVICES; the tests do not. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_env_values),
        cmocka_unit_test(test_env_values_unknown),
#ifdef GPUPROBE_HAVE_CUDA
        cmocka_unit_test(test_machine_cause),
        cmocka_unit_test(test_empty_libdir),
        cmocka_unit_test(test_libdir_path_too_long),
        cmocka_unit_test(test_relative_libdir),
        cmocka_unit_test(test_libdir_of_real_runtime),
        cmocka_unit_test(test_fault_no_runtime),
        cmocka_unit_test(test_fault_no_driver),
        cmocka_unit_test(test_cublas_needs_cuda),
#else
        cmocka_unit_test(test_not_built),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
