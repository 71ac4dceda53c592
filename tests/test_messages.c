/*
 * test_messages.c - every message the library builds is one line of
 * printable ASCII, whatever bytes come from outside.
 *
 * Outside text reaches messages from the dynamic loader (dlerror() quotes
 * the path it was given, and so GPUPROBE_CUDA_LIBDIR), from the driver
 * (device names, error names and descriptions) and from files. Each is
 * passed through gp_quote(), and every message the library keeps (the last
 * error, the CUDA detail, the selection reason) through it once more.
 * Here hostile bytes - a newline, an escape sequence, 0xff - are fed in:
 * through a fake CUDA library directory whose name holds them, a simulated
 * device named with them, and an OpenBLAS that fails to load from such a
 * directory. Device names keep their bytes in the NAME attribute.
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

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "unit_check.h"
#include "sysroot_util.h"

#define GiB (UINT64_C(1) << 30)

/* The hostile part of every name below. */
#define HOSTILE "evil\n\x1b[31m\xff\x7f"

static void assert_printable(const char *what, const char *msg)
{
    assert_non_null(msg);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            fail_msg("%s: byte 0x%02x at offset %zu is not printable ASCII",
                     what, *p, (size_t)((const char *)p - msg));
}

static int setup(void **state)
{
    (void)state;
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    unsetenv("GPUPROBE_DEVICE");
    gp_test_dlopen = NULL;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gp_test_dlopen = NULL;
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    return 0;
}

/* ---- the quoting rule ---- */

static void quote_rule(void **state)
{
    (void)state;
    char out[64];
    gp_quote(out, sizeof out, "ok " HOSTILE " end", SIZE_MAX);
    assert_string_equal(out, "ok evil?\?[31m?\? end");
    gp_quote(out, 8, "abcdefghijkl", SIZE_MAX); /* room for 7 */
    assert_string_equal(out, "abcd...");
    gp_quote(out, sizeof out, "abcdefghijkl", 5);
    assert_string_equal(out, "abcde...");
    gp_quote(out, sizeof out, NULL, 10);
    assert_string_equal(out, "(null)");
    /* In place: the form every kept message goes through last. */
    char msg[] = "line one\nline two\t\xc3\xa9";
    gp_quote_inplace(msg);
    assert_string_equal(msg, "line one?line two?\??");
    /* gp_fail applies it to whatever it is given. */
    gpuprobe_context *ctx = new_ctx();
    assert_int_equal(gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "read %s", "x\n\x1b" "y"),
                     GPUPROBE_ERR_SYSTEM);
    assert_string_equal(gpuprobe_last_error(ctx), "read x?\?y");
    gpuprobe_context_destroy(ctx);
}

/* Appending: after what the buffer holds, cut to fit, always terminated,
 * a cut marked with "..." at the end; a full buffer takes nothing more
 * and says so; an empty piece changes nothing. */
static void append_rule(void **state)
{
    (void)state;
    char buf[8] = "ab";
    gp_appendf(buf, sizeof buf, "%s-%d", "cd", 7);
    assert_string_equal(buf, "abcd-7");
    gp_appendf(buf, sizeof buf, "%s", "x"); /* exactly full */
    assert_string_equal(buf, "abcd-7x");
    gp_appendf(buf, sizeof buf, "%s", "");
    assert_string_equal(buf, "abcd-7x");
    gp_appendf(buf, sizeof buf, "%s", "q"); /* left out: marked */
    assert_string_equal(buf, "abcd...");
    gp_appendf(buf, sizeof buf, "%s", "q");
    assert_string_equal(buf, "abcd...");
    char two[8] = "ab";
    gp_appendf(two, sizeof two, "%s", "cdefgh"); /* one byte over */
    assert_string_equal(two, "abcd...");
    char tiny[3] = "";
    gp_appendf(tiny, sizeof tiny, "%s", "xyz"); /* no room for a mark */
    assert_string_equal(tiny, "xy");
    char unterminated[4] = {'a', 'b', 'c', 'd'};
    char after = 'z';
    gp_appendf(unterminated, sizeof unterminated, "%s", "e");
    assert_memory_equal(unterminated, "abcd", 4);
    assert_int_equal(after, 'z');
    char empty[5] = "";
    gp_appendf(empty, sizeof empty, "%d", 12345);
    assert_string_equal(empty, "1...");
    gp_appendf(empty, 0, "%d", 9); /* no room at all */
    assert_string_equal(empty, "1...");
}

/* The message of a refused size-prefixed struct, for one entry point. */
static void expect_size_message(gpuprobe_context *ctx, gpuprobe_status st, const char *fn,
                                const char *arg, size_t size, size_t min, const char *type,
                                const char *init)
{
    char want[GP_ERR_LEN];
    snprintf(want, sizeof want, "%s: %s->size is %zu, less than the %zu bytes of %s (use %s)",
             fn, arg, size, min, type, init);
    assert_int_equal(st, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_string_equal(gpuprobe_last_error(ctx), want);
}

/* Size-prefixed structs: one byte short of the oldest version is refused
 * with the one message, naming the initialiser, by all four entry points
 * that take one; the oldest version itself is taken. */
static void size_rule(void **state)
{
    (void)state;
    static const gp_fake_cuda none = {GPUPROBE_CUDA_NO_DEVICE, "", 0, NULL};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &none);

    size_t end = GP_END_OF(gpuprobe_memory_info, flags);
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    info.size = end - 1;
    expect_size_message(ctx, gpuprobe_device_memory(ctx, 0, &info, 0), "gpuprobe_device_memory",
                        "info", end - 1, end, "gpuprobe_memory_info",
                        "GPUPROBE_MEMORY_INFO_INIT");
    info.size = end;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);

    end = GP_END_OF(gpuprobe_capacity, reserve_source);
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    cap.size = end - 1;
    expect_size_message(ctx, gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                                      GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                        "gpuprobe_device_capacity", "out", end - 1, end, "gpuprobe_capacity",
                        "GPUPROBE_CAPACITY_INIT");
    cap.size = end;
    assert_int_equal(gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap),
                     GPUPROBE_OK);

    gpuprobe_model *model = NULL;
    assert_int_equal(gpuprobe_model_create(&model), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(model, GPUPROBE_MODEL_PARAMS, 1000), GPUPROBE_OK);
    end = GP_END_OF(gpuprobe_plan, flags);
    gpuprobe_plan plan = GPUPROBE_PLAN_INIT;
    plan.size = end - 1;
    expect_size_message(ctx, gpuprobe_plan_device(ctx, 0, model, NULL, 0, &plan),
                        "gpuprobe_plan_device", "out", end - 1, end, "gpuprobe_plan",
                        "GPUPROBE_PLAN_INIT");
    plan.size = end;
    assert_int_equal(gpuprobe_plan_compute(ctx, model, NULL, 0, &plan), GPUPROBE_OK);
    gpuprobe_model_destroy(model);

    end = GP_END_OF(gpuprobe_requirements, fit_workload);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.size = end - 1;
    size_t device = 99;
    expect_size_message(ctx, gpuprobe_select(ctx, "cpu", &req, 0, &device, NULL),
                        "gpuprobe_select", "req", end - 1, end, "gpuprobe_requirements",
                        "GPUPROBE_REQUIREMENTS_INIT");
    assert_int_equal(device, 99);
    req.size = end;
    assert_int_equal(gpuprobe_select(ctx, "cpu", &req, 0, &device, NULL), GPUPROBE_OK);
    assert_int_equal(device, 0);

    /* Without a context: the status alone; a type name too long for the
     * initialiser's buffer is cut, the message still one line. */
    assert_int_equal(gp_check_size(NULL, "f", "p", 1, 2, "t"), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_check_size(NULL, "f", "p", 2, 2, "t"), GPUPROBE_OK);
    char longtype[100];
    memset(longtype, 'x', sizeof longtype - 1);
    longtype[sizeof longtype - 1] = '\0';
    assert_int_equal(gp_check_size(ctx, "f", "p", 1, 2, longtype), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), " (use XXXXXXXXXX"));
    assert_non_null(strstr(gpuprobe_last_error(ctx), "_INIT)"));
    gpuprobe_context_destroy(ctx);
}

/* ---- a fake CUDA library directory with a hostile name ---- */

static void hostile_libdir(void **state)
{
    (void)state;
#ifndef GPUPROBE_HAVE_CUDA
    skip(); /* the CUDA libraries are never looked for */
#else
    char root[] = "/tmp/gpuprobe-msg-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[256];
    snprintf(dir, sizeof dir, "%s/" HOSTILE, root);
    /* Files that are not shared objects: dlopen() fails, and its message
     * quotes the full path. */
    for (int major = 11; major <= 13; major++) {
        char rel[64];
        snprintf(rel, sizeof rel, HOSTILE "/libcudart.so.%d", major);
        sr_put(root, rel, "not an ELF file\n");
    }
    setenv("GPUPROBE_CUDA_LIBDIR", dir, 1);
    gpuprobe_context *ctx = new_ctx();
    unsetenv("GPUPROBE_CUDA_LIBDIR");

    gpuprobe_cuda_cause cause;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_int_equal(cause, GPUPROBE_CUDA_NO_RUNTIME);
    print_message("detail: %s\n", detail);
    assert_printable("CUDA detail", detail);
    /* The loader's own words came through (quoted), not a stand-in. */
    assert_non_null(strstr(detail, "evil?\?[31m?\?/libcudart.so."));

    size_t dev = 99;
    const char *reason = NULL;
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_OK);
    assert_int_equal(dev, 0);
    assert_printable("selection reason", reason);
    assert_non_null(strstr(reason, "libcudart"));
    assert_int_equal(gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_printable("select(cuda) error", gpuprobe_last_error(ctx));
    int v = 0;
    assert_int_equal(gpuprobe_cuda_runtime_version(ctx, &v),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_printable("runtime version error", gpuprobe_last_error(ctx));
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
#endif
}

/* ---- a simulated device with a hostile name ---- */

static const gp_fake_cuda_device evil_devs[] = {
    {"GPU " HOSTILE, 7, 5, 16 * GiB, 8 * GiB, 0},
};
static const gp_fake_cuda evil = {GPUPROBE_CUDA_AVAILABLE, "fake", 1, evil_devs};
static const gp_fake_cuda evil_cause = {GPUPROBE_CUDA_OTHER,
                                        "driver said " HOSTILE, 0, NULL};

static void hostile_device_name(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &evil);

    /* The attribute keeps the driver's bytes. */
    const char *name = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 1, GPUPROBE_ATTR_NAME, &name),
                     GPUPROBE_OK);
    assert_string_equal(name, "GPU " HOSTILE);

    size_t dev = 99;
    const char *reason = NULL;
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_OK);
    assert_int_equal(dev, 1);
    assert_printable("selection reason", reason);
    assert_non_null(strstr(reason, "GPU evil?\?[31m?\?"));
    assert_int_equal(gpuprobe_select(ctx, "cuda:0", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_OK);
    assert_printable("selection reason (cuda:0)", reason);

    /* A requirement it fails: the message names it. */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 64 * GiB;
    assert_int_equal(gpuprobe_select(ctx, "cuda", &req, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, NULL),
                     GPUPROBE_ERR_NO_FIT);
    assert_printable("no-fit error", gpuprobe_last_error(ctx));
    assert_int_equal(gpuprobe_select(ctx, "cuda:0", &req, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, NULL),
                     GPUPROBE_ERR_NO_FIT);
    assert_printable("no-fit error (cuda:0)", gpuprobe_last_error(ctx));
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.min_cc_major = 8;
    assert_int_equal(gpuprobe_select(ctx, "auto", &req, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, NULL),
                     GPUPROBE_ERR_NO_FIT);
    assert_printable("no-fit error (auto)", gpuprobe_last_error(ctx));

    /* A precision the device cannot do (tf32 on 7.5). */
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE,
                                                 GPUPROBE_DTYPE_TF32),
                     GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    assert_printable("matmul error", gpuprobe_last_error(ctx));
    assert_non_null(strstr(gpuprobe_last_error(ctx), "GPU evil?"));
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);

    /* A cause's detail from outside. */
    ctx = new_ctx();
    gp_test_set_cuda(ctx, &evil_cause);
    gpuprobe_cuda_cause cause;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    assert_printable("CUDA detail", detail);
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV,
                                     &dev, &reason),
                     GPUPROBE_OK);
    assert_printable("selection reason", reason);
    gpuprobe_context_destroy(ctx);
}

/* ---- OpenBLAS failing to load from a hostile directory ---- */

static char blas_dir[256];

static void *hostile_dlopen(const char *file, int mode)
{
    if (file && strcmp(file, "libopenblas.so.0") == 0) {
        char path[320];
        snprintf(path, sizeof path, "%s/libopenblas.so.0", blas_dir);
        return dlopen(path, mode);
    }
    return dlopen(file, mode);
}

static void hostile_dlerror(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-msg-XXXXXX";
    assert_non_null(mkdtemp(root));
    snprintf(blas_dir, sizeof blas_dir, "%s/" HOSTILE, root);
    sr_put(root, HOSTILE "/libopenblas.so.0", "not an ELF file\n");
    gp_test_dlopen = hostile_dlopen;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 16), GPUPROBE_OK);
    gpuprobe_matmul_result *r = NULL;
    assert_int_equal(gpuprobe_matmul_run(ctx, 0, o, 0, &r), GPUPROBE_ERR_UNSUPPORTED);
    const char *msg = gpuprobe_last_error(ctx);
    print_message("error: %s\n", msg);
    assert_printable("OpenBLAS load error", msg);
    assert_non_null(strstr(msg, "evil?\?[31m?\?/libopenblas.so.0"));
    const char *core = NULL;
    assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_printable("BLAS attribute error", gpuprobe_last_error(ctx));
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
    gp_test_dlopen = NULL;
    sr_rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(quote_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(append_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(size_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_libdir, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_device_name, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_dlerror, setup, teardown),
    };
    return cmocka_run_group_tests_name("messages", tests, NULL, NULL);
}
