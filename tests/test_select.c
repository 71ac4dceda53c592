/*
 * test_select.c - gpuprobe_select() and the spec parser, over simulated
 * device sets (the gp_test_set_cuda() seam), the GPUPROBE_DEVICE override,
 * malformed specs, and the real machine.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "unit_check.h"
#include "sysroot_util.h"

#define GB UINT64_C(1000000000)
#define NOT_SET ((size_t)0xC0FFEE)
#define NAME_SHOWN_T 64 /* the bytes of a device name that messages show */

/* ---- simulated device sets ---- */

static const gp_fake_cuda no_driver = {
    GPUPROBE_CUDA_NO_DRIVER, "libcuda.so.1 not found (simulated)", 0, NULL};

static const gp_fake_cuda hidden = {
    GPUPROBE_CUDA_DEVICES_HIDDEN,
    "CUDA_VISIBLE_DEVICES=\"\" hides 2 devices (simulated)", 0, NULL};

static const gp_fake_cuda_device one_devs[] = {
    {"Sim One", 8, 0, 40 * GB, 30 * GB, 0},
};
static const gp_fake_cuda one = {GPUPROBE_CUDA_AVAILABLE, "", 1, one_devs};

/* cuda:0 has less free memory and CC 8.6; cuda:1 more and CC 9.0 */
static const gp_fake_cuda_device two_devs[] = {
    {"Sim Small", 8, 6, 24 * GB, 12 * GB, 0},
    {"Sim Big", 9, 0, 80 * GB, 70 * GB, 500000000},
};
static const gp_fake_cuda two = {GPUPROBE_CUDA_AVAILABLE, "", 2, two_devs};

/* cuda:0 big but old; cuda:1 small but new */
static const gp_fake_cuda_device mixed_devs[] = {
    {"Sim Old Big", 7, 0, 32 * GB, 30 * GB, 0},
    {"Sim New Small", 9, 0, 16 * GB, 10 * GB, 0},
};
static const gp_fake_cuda mixed = {GPUPROBE_CUDA_AVAILABLE, "", 2, mixed_devs};

/* three devices, the last two tie on free memory */
static const gp_fake_cuda_device tie_devs[] = {
    {"Sim Tie A", 8, 0, 40 * GB, 20 * GB, 0},
    {"Sim Tie B", 8, 0, 40 * GB, 35 * GB, 0},
    {"Sim Tie C", 8, 0, 40 * GB, 35 * GB, 0},
};
static const gp_fake_cuda tie = {GPUPROBE_CUDA_AVAILABLE, "", 3, tie_devs};

/* A new context that sees the fake CUDA f (NULL: the real one). */
static gpuprobe_context *fake_ctx(const gp_fake_cuda *f)
{
    gpuprobe_context *ctx = new_ctx();
    if (f)
        gp_test_set_cuda(ctx, f);
    return ctx;
}

/* The CUDA ordinal of device index idx (-1 for the CPU). */
static int ordinal_of(gpuprobe_context *ctx, size_t idx)
{
    const gp_device *d = NULL;
    assert_int_equal(gp_get_device(ctx, idx, &d), GPUPROBE_OK);
    return d->kind == GPUPROBE_DEVICE_CPU ? -1 : d->cuda_index;
}

/* Select and expect success; returns the CUDA ordinal (-1: cpu). */
static int pick(gpuprobe_context *ctx, const char *spec,
                const gpuprobe_requirements *req, unsigned flags,
                const char **reason)
{
    size_t dev = NOT_SET;
    const char *why = NULL;
    gpuprobe_status st = gpuprobe_select(ctx, spec, req, flags, &dev, &why);
    if (st != GPUPROBE_OK)
        fail_msg("select(\"%s\"): %s: %s", spec ? spec : "(null)",
                 gpuprobe_status_name(st), gpuprobe_last_error(ctx));
    assert_true(dev != NOT_SET);
    assert_non_null(why);
    assert_true(strlen(why) > 0);
    assert_true(strlen(why) < GP_ERR_LEN);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    if (reason)
        *reason = why;
    return ordinal_of(ctx, dev);
}

/* Select and expect the status st; *device must stay untouched. */
static const char *expect_fail(gpuprobe_context *ctx, const char *spec,
                               const gpuprobe_requirements *req, unsigned flags,
                               gpuprobe_status st)
{
    size_t dev = NOT_SET;
    const char *why = (const char *)&dev; /* must not be written either */
    gpuprobe_status got = gpuprobe_select(ctx, spec, req, flags, &dev, &why);
    if (got != st)
        fail_msg("select(\"%.60s\"): %s, want %s: %s", spec ? spec : "(null)",
                 gpuprobe_status_name(got), gpuprobe_status_name(st),
                 gpuprobe_last_error(ctx));
    assert_true(dev == NOT_SET);
    assert_true(why == (const char *)&dev);
    const char *msg = gpuprobe_last_error(ctx);
    assert_true(strlen(msg) > 0);
    assert_true(strlen(msg) < GP_ERR_LEN);
    return msg;
}

static void assert_printable_ascii(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p >= 0x7f)
            fail_msg("byte 0x%02x in message \"%s\"", *p, s);
}

/* ---- no GPU, one GPU, two GPUs, ties ---- */

static void test_no_gpu(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&no_driver);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    assert_contains(why, "auto: CUDA not usable (");
    assert_contains(why, gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DRIVER));
    assert_contains(why, "libcuda.so.1 not found (simulated)");
    assert_contains(why, "using cpu");
    assert_int_equal(pick(ctx, "", NULL, 0, NULL), -1);
    assert_int_equal(pick(ctx, "cpu", NULL, 0, NULL), -1);

    const char *msg = expect_fail(ctx, "cuda", NULL, 0,
                                  GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_contains(msg, gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DRIVER));
    assert_contains(msg, "no_driver");
    msg = expect_fail(ctx, "cuda:0", NULL, 0, GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_contains(msg, "cuda:0");
    assert_contains(msg, "simulated");
    /* unavailable wins over "out of range": the cause is the real answer */
    expect_fail(ctx, "cuda:7", NULL, 0, GPUPROBE_ERR_CUDA_UNAVAILABLE);
    gpuprobe_context_destroy(ctx);
}

/* CUDA said available but lists no device (the seam can say so): CUDA
 * is not usable, for want of a device, and the reason says that rather
 * than the "available" of the cause. */
static const gp_fake_cuda available_none = {GPUPROBE_CUDA_AVAILABLE, "", 0, NULL};

static void test_available_without_devices(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&available_none);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    char want[256];
    snprintf(want, sizeof want, "auto: CUDA not usable (%s); using cpu",
             gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DEVICE));
    assert_string_equal(why, want);
    const char *msg = expect_fail(ctx, "cuda", NULL, 0, GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_contains(msg, gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DEVICE));
    gpuprobe_context_destroy(ctx);
}

static void test_one_gpu(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&one);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), 0);
    assert_string_equal(why, "auto: cuda:0 (Sim One), 30.0 GB free, the only CUDA device");
    /* the only device there is: said so, with requirements or without */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 1;
    assert_int_equal(pick(ctx, "cuda", &req, 0, &why), 0);
    assert_string_equal(why, "cuda: cuda:0 (Sim One), 30.0 GB free, the only CUDA device");
    assert_int_equal(pick(ctx, "cuda", NULL, 0, NULL), 0);
    assert_int_equal(pick(ctx, "cuda:0", NULL, 0, NULL), 0);
    assert_int_equal(pick(ctx, "cpu", NULL, 0, NULL), -1);
    const char *msg = expect_fail(ctx, "cuda:1", NULL, 0, GPUPROBE_ERR_NOT_FOUND);
    assert_contains(msg, "cuda:1");
    assert_contains(msg, "1 CUDA device");
    gpuprobe_context_destroy(ctx);
}

static void test_two_gpus_most_free(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&two);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), 1);
    assert_contains(why, "cuda:1 (Sim Big)");
    assert_contains(why, "most free memory");
    assert_int_equal(pick(ctx, "cuda", NULL, 0, NULL), 1);
    assert_int_equal(pick(ctx, "cuda:0", NULL, 0, NULL), 0);
    assert_int_equal(pick(ctx, "cuda:1", NULL, 0, NULL), 1);
    const char *msg = expect_fail(ctx, "cuda:2", NULL, 0, GPUPROBE_ERR_NOT_FOUND);
    assert_contains(msg, "2 CUDA devices");
    expect_fail(ctx, "cuda:2147483647", NULL, 0, GPUPROBE_ERR_NOT_FOUND);
    gpuprobe_context_destroy(ctx);
}

static void test_tie_lowest_ordinal(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&tie);
    assert_int_equal(pick(ctx, "auto", NULL, 0, NULL), 1);
    assert_int_equal(pick(ctx, "cuda", NULL, 0, NULL), 1);
    gpuprobe_context_destroy(ctx);
}

/* ---- requirements ---- */

static void test_requirements_skip(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&mixed);
    const char *why = NULL;
    /* no requirement: the old big one has more free memory */
    assert_int_equal(pick(ctx, "auto", NULL, 0, NULL), 0);

    /* min CC 8.0 skips the old one */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_cc_major = 8;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 1);
    assert_contains(why, "cuda:1 (Sim New Small)");
    assert_contains(why, "skipped cuda:0 (Sim Old Big): compute capability 7.0 < 8.0");
    /* min CC with minor: 9.1 fits nobody; the CPU is excluded too */
    req.min_cc_major = 9;
    req.min_cc_minor = 1;
    const char *msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Old Big): compute capability 7.0 < 9.1");
    assert_contains(msg, "cuda:1 (Sim New Small): compute capability 9.0 < 9.1");
    assert_contains(msg, "cpu: not a CUDA device");
    /* explicit device failing the requirement: NO_FIT, no fallback */
    req.min_cc_major = 8;
    req.min_cc_minor = 0;
    msg = expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Old Big)");
    msg = expect_fail(ctx, "cpu", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cpu: ");

    /* min free 20 GB skips the small new one */
    gpuprobe_requirements free_req = GPUPROBE_REQUIREMENTS_INIT;
    free_req.min_free_bytes = 20 * GB;
    assert_int_equal(pick(ctx, "cuda", &free_req, 0, &why), 0);
    free_req.min_free_bytes = 25 * GB;
    assert_int_equal(pick(ctx, "auto", &free_req, 0, &why), 0);
    msg = expect_fail(ctx, "cuda:1", &free_req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:1 (Sim New Small): 10.0 GB free < 25.0 GB required");
    gpuprobe_context_destroy(ctx);
}

static void test_requirements_fit(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&two);
    const char *why = NULL;
    /* 7 B fp16 for inference needs 16.8 GB: only Sim Big (70 GB) fits,
     * and it would win anyway; ask cuda:0 explicitly to see it fail. */
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 7 * GB;
    req.fit_dtype = GPUPROBE_DTYPE_FP16;
    req.fit_workload = GPUPROBE_WORKLOAD_INFERENCE;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 1);
    assert_contains(why, "skipped cuda:0 (Sim Small)");
    assert_contains(why, "16.8 GB");
    const char *msg = expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Small)");
    assert_contains(msg, "need 16.8 GB");
    assert_contains(msg, "default CUDA context reserve");

    /* 5.9 B fp16 weights = 11.8 GB: fits 12 GB free only without the
     * 512 MiB reserve, so it does not fit cuda:0 */
    req.fit_params = 5900000000u;
    req.fit_workload = GPUPROBE_WORKLOAD_WEIGHTS;
    expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    req.fit_params = 5700000000u; /* 11.4 GB <= 12 GB - 0.54 GB */
    assert_int_equal(pick(ctx, "cuda:0", &req, 0, NULL), 0);

    /* training 4 B params = 64 GB: only Sim Big (70 GB - 0.5 GB measured) */
    req.fit_params = 4 * GB;
    req.fit_dtype = GPUPROBE_DTYPE_BF16;
    req.fit_workload = GPUPROBE_WORKLOAD_TRAINING;
    assert_int_equal(pick(ctx, "cuda", &req, 0, NULL), 1);
    /* 4.5 B = 72 GB: nothing fits, every device named */
    req.fit_params = 4500000000u;
    size_t dev = NOT_SET;
    gpuprobe_status st = gpuprobe_select(ctx, "auto", &req, 0, &dev, &why);
    if (st == GPUPROBE_OK) {
        /* the CPU has more than 72 GB available: auto falls back to it */
        assert_int_equal(dev, 0);
        assert_contains(why, "no CUDA device meets the requirements");
        assert_contains(why, "cuda:1 (Sim Big)");
    } else {
        assert_int_equal(st, GPUPROBE_ERR_NO_FIT);
        msg = gpuprobe_last_error(ctx);
        assert_contains(msg, "cuda:0 (Sim Small)");
        assert_contains(msg, "cuda:1 (Sim Big)");
        assert_contains(msg, "measured CUDA context reserve");
        assert_contains(msg, "cpu: ");
    }
    msg = expect_fail(ctx, "cuda", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Small)");
    assert_contains(msg, "cuda:1 (Sim Big)");
    gpuprobe_context_destroy(ctx);
}

/* A model as a requirement (1.2): its plan against each device (overhead
 * and what allocations can get, per device) decides, and "auto" takes the
 * GPU with the most room left after it, which need not be the one with
 * the most free memory: cuda:0 has more free memory than cuda:1 but its
 * measured CUDA context costs 2 GB. cuda:2 is skipped, with the figures.
 * A 1.1-sized struct does not see the model; a bad model is refused
 * before any device is looked at. */
static void test_requirements_model(void **state)
{
    (void)state;
    static const gp_fake_cuda_device devs[] = {
        {"Sim Free", 8, 0, 40 * GB, 30500000000, 2 * GB},
        {"Sim Room", 8, 0, 40 * GB, 30 * GB, 0},
        {"Sim Small", 8, 0, 8 * GB, 3 * GB, 0},
    };
    static const gp_fake_cuda three = {GPUPROBE_CUDA_AVAILABLE, "", 3, devs};
    gpuprobe_context *ctx = fake_ctx(&three);
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, 1000000000), GPUPROBE_OK);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    assert_null(req.fit_model);
    assert_null(req.fit_plan);
    req.fit_model = m;
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 1);
    assert_contains(why, "auto: cuda:1 (Sim Room) has the most room for the model (");
    assert_contains(why, " left after the model's 4.0 GB) of 2 CUDA devices that hold it");
    assert_contains(why, "; skipped cuda:2 (Sim Small): the model needs 4.0 GB > 3.0 GB available");
    /* the room is the plan's: what allocations get less its total */
    gpuprobe_plan p1 = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 2, m, NULL, 0, &p1), GPUPROBE_OK);
    char left[64];
    snprintf(left, sizeof left, "(%.1f GB left",
             (double)(p1.available_bytes - p1.total_bytes) / 1e9);
    assert_contains(why, left);
    /* cuda:2 named: refused with the figures */
    const char *msg = expect_fail(ctx, "cuda:2", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:2 (Sim Small): the model needs 4.0 GB > 3.0 GB available");
    /* a 1.1 caller's struct ends before the model: the most free memory */
    req.size = offsetof(gpuprobe_requirements, fit_model);
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 0);
    req.size = sizeof req;
    /* the model's own errors come first, whatever the devices */
    gpuprobe_model *empty = NULL;
    assert_int_equal(gpuprobe_model_create(&empty), GPUPROBE_OK);
    req.fit_model = empty;
    msg = expect_fail(ctx, "cuda:9", &req, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "empty");
    /* too large for anything, the CPU too */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, (int64_t)GPUPROBE_MAX_PARAMS),
                     GPUPROBE_OK);
    req.fit_model = m;
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Free): the model needs ");
    assert_contains(msg, "cpu: the model needs ");
    gpuprobe_model_destroy(empty);
    gpuprobe_model_destroy(m);
    gpuprobe_context_destroy(ctx);
}

static void test_nothing_fits(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&two);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = UINT64_C(1000000000000000); /* 1 PB */
    const char *msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Small): 12.0 GB free < 1.0 PB required");
    assert_contains(msg, "cuda:1 (Sim Big): 70.0 GB free < 1.0 PB required");
    assert_contains(msg, "cpu: ");
    assert_contains(msg, "available < 1.0 PB required");
    gpuprobe_context_destroy(ctx);

    /* no CUDA and the CPU fails: the message says both */
    ctx = fake_ctx(&no_driver);
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "CUDA not usable");
    assert_contains(msg, "cpu: ");
    gpuprobe_context_destroy(ctx);
}

static void test_all_hidden(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&hidden);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    assert_contains(why, gpuprobe_cuda_cause_string(GPUPROBE_CUDA_DEVICES_HIDDEN));
    assert_contains(why, "hides 2 devices");
    const char *msg = expect_fail(ctx, "cuda", NULL, 0,
                                  GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_contains(msg, gpuprobe_cuda_cause_string(GPUPROBE_CUDA_DEVICES_HIDDEN));
    assert_contains(msg, "devices_hidden");
    expect_fail(ctx, "cuda:0", NULL, 0, GPUPROBE_ERR_CUDA_UNAVAILABLE);
    gpuprobe_context_destroy(ctx);
}

/* Many devices with long names: messages stay bounded and say so. */
#define LONGDEV(n, freegb)                                                    \
    {"Simulated Accelerator With A Rather Long Product Name " #n, 8, 0,       \
     96 * GB, (freegb)*GB, 0}
static const gp_fake_cuda_device many_devs[] = {
    LONGDEV(0, 10),  LONGDEV(1, 11),  LONGDEV(2, 12),  LONGDEV(3, 13),
    LONGDEV(4, 14),  LONGDEV(5, 15),  LONGDEV(6, 16),  LONGDEV(7, 17),
    LONGDEV(8, 18),  LONGDEV(9, 19),  LONGDEV(10, 20), LONGDEV(11, 21),
    LONGDEV(12, 22), LONGDEV(13, 23), LONGDEV(14, 24), LONGDEV(15, 90),
};
static const gp_fake_cuda many = {GPUPROBE_CUDA_AVAILABLE, "", 16, many_devs};

static void test_many_devices_bounded(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&many);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), 15);

    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 50 * GB;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 15);
    assert_contains(why, "auto: cuda:15 (Simulated Accelerator");
    assert_contains(why, "skipped cuda:0 (");
    assert_contains(why, "...");
    assert_true(strlen(why) == GP_ERR_LEN - 1);
    assert_printable_ascii(why);

    req.fit_params = UINT64_C(1000000000000); /* 1 T fp16 params: 2 TB */
    const char *msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_true(strncmp(msg, "cuda:0 (", 8) == 0); /* the status text is not repeated */
    assert_contains(msg, "...");
    assert_printable_ascii(msg);
    msg = expect_fail(ctx, "cuda", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_true(strlen(msg) == GP_ERR_LEN - 1);
    assert_true(strcmp(msg + strlen(msg) - 3, "...") == 0);
    gpuprobe_context_destroy(ctx);
}

/* ---- the CPU judged by its own memory ---- */

/* A sysroot whose /proc/meminfo is `meminfo` (NULL: there is none). */
static char *cpu_sysroot(const char *meminfo)
{
    static char root[64];
    strcpy(root, "/tmp/gpuprobe-sel-XXXXXX");
    assert_non_null(mkdtemp(root));
    if (meminfo)
        sr_put(root, "proc/meminfo", meminfo);
    return root;
}

static gpuprobe_context *ctx_with_sysroot(const gp_fake_cuda *f, const char *root)
{
    gpuprobe_context *ctx = fake_ctx(f);
    gp_test_set_sysroot(ctx, root);
    return ctx;
}

/* When no GPU qualifies, auto checks the CPU against its own available
 * memory (153.6 GB here), never a GPU's. */
static void test_cpu_fallback_by_cpu_memory(void **state)
{
    (void)state;
    char *root = cpu_sysroot("MemTotal: 200000000 kB\nMemAvailable: 150000000 kB\n");
    gpuprobe_context *ctx = ctx_with_sysroot(&two, root);
    const char *why = NULL;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 100 * GB;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), -1);
    assert_string_equal(why, "auto: no CUDA device meets the requirements ("
                             "cuda:0 (Sim Small): 12.0 GB free < 100.0 GB required; "
                             "cuda:1 (Sim Big): 70.0 GB free < 100.0 GB required); "
                             "using cpu");
    req.min_free_bytes = 153600000000u; /* exactly what the CPU has */
    assert_int_equal(pick(ctx, "auto", &req, 0, NULL), -1);
    req.min_free_bytes = 160 * GB;
    const char *msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "; cpu: 153.6 GB available < 160.0 GB required");

    /* The same by model size: 50 B fp16 weights (100 GB) fit only the CPU
     * (no context reserve there); 80 B (160 GB) fit nothing. */
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 50 * GB;
    assert_int_equal(pick(ctx, "auto", &req, 0, NULL), -1);
    req.fit_params = 80 * GB;
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cpu: 80.0 B fp16 parameters for weights need 160.0 GB > "
                         "153.6 GB available");
    gpuprobe_context_destroy(ctx);

    /* CUDA not usable: the CPU on its own figures. */
    ctx = ctx_with_sysroot(&no_driver, root);
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 100 * GB;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), -1);
    assert_contains(why, "auto: CUDA not usable (");
    req.min_free_bytes = 160 * GB;
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "CUDA not usable (");
    assert_contains(msg, "); cpu: 153.6 GB available < 160.0 GB required");
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* A candidate whose memory or capacity query fails (no /proc/meminfo) is
 * excluded with the reason; the selection itself goes on and ends in
 * NO_FIT, not in the query's error. */
static void test_candidate_query_fails(void **state)
{
    (void)state;
    char *root = cpu_sysroot(NULL);
    gpuprobe_context *ctx = ctx_with_sysroot(&two, root);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 1;
    const char *msg = expect_fail(ctx, "cpu", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cpu: memory query "
                         "failed: cannot read ");
    assert_contains(msg, "/proc/meminfo");

    req.min_free_bytes = 100 * GB;
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:1 (Sim Big): 70.0 GB free < 100.0 GB required");
    assert_contains(msg, "; cpu: memory query failed: cannot read ");

    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 1000;
    msg = expect_fail(ctx, "cpu", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cpu: capacity query "
                         "failed: cannot read ");

    /* Without a memory requirement the CPU's memory is never read. */
    assert_int_equal(pick(ctx, "auto", NULL, 0, NULL), 1);
    assert_int_equal(pick(ctx, "cpu", NULL, 0, NULL), -1);
    gpuprobe_context_destroy(ctx);

    ctx = ctx_with_sysroot(&no_driver, root);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 1;
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cpu: memory query failed: cannot read ");
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* The list of devices that did not qualify is cut to 300 bytes in a
 * NO_FIT message and to 380 in the reason for falling back to the CPU. */
static void test_skipped_list_cut(void **state)
{
    (void)state;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = UINT64_C(1000000000000); /* 1 T fp16 params: 2 TB */
    char *root = cpu_sysroot("MemTotal: 1048576 kB\nMemAvailable: 524288 kB\n");
    gpuprobe_context *ctx = ctx_with_sysroot(&many, root);
    const char *msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_NO_FIT);
    /* The message is the list itself: the status already says that no
     * device meets the requirements. */
    assert_true(strncmp(msg, "cuda:0 ", 7) == 0);
    const char *cpu = strstr(msg, "; cpu: ");
    assert_non_null(cpu);
    assert_int_equal(cpu - msg, 300);
    assert_true(strncmp(cpu - 3, "...", 3) == 0);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);

    root = cpu_sysroot("MemTotal: 8589934592 kB\nMemAvailable: 8589934592 kB\n");
    ctx = ctx_with_sysroot(&many, root);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), -1);
    static const char prefix[] = "auto: no CUDA device meets the requirements (";
    assert_true(strncmp(why, prefix, sizeof prefix - 1) == 0);
    const char *tail = strstr(why, "); using cpu");
    assert_non_null(tail);
    assert_string_equal(tail, "); using cpu");
    assert_int_equal(tail - (why + sizeof prefix - 1), 380);
    assert_true(strncmp(tail - 3, "...", 3) == 0);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* ---- messages, to the byte ---- */

#define NAME80 "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefgh"
static const gp_fake_cuda_device edge_devs[] = {
    {"", 8, 6, 4 * GB, 999, 0},          /* no name, 999 bytes free */
    {NAME80, 8, 6, 40 * GB, 20 * GB, 0}, /* a name longer than shown */
    {"Zero", 8, 6, 1 * GB, 0, 0},        /* nothing free */
};
static const gp_fake_cuda edge = {GPUPROBE_CUDA_AVAILABLE, "", 3, edge_devs};

static void test_messages_exact(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&edge);
    const char *why = NULL;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    /* 999 B and 1.0 kB; an unnamed device is its spec; names cut at 64 */
    req.min_free_bytes = 1000;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 1);
    assert_string_equal(why, "auto: cuda:1 (" "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01..."
                             "), 20.0 GB free, the only CUDA device that meets the "
                             "requirements; skipped cuda:0: 999 B free < 1.0 kB required; "
                             "cuda:2 (Zero): 0 B free < 1.0 kB required");
    req.min_free_bytes = 1;
    const char *msg = expect_fail(ctx, "cuda:2", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_string_equal(msg, "cuda:2 (Zero): 0 B "
                             "free < 1 B required");
    req.min_free_bytes = UINT64_C(10000000000000000000);
    msg = expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "999 B free < 10.0 EB required");
    req.min_free_bytes = UINT64_MAX;
    msg = expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "999 B free < 18.4 EB required");
    /* parameter counts: 999 whole, 1000 scaled */
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 499;
    msg = expect_fail(ctx, "cuda:2", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_string_equal(msg, "cuda:2 (Zero): 499 fp16 "
                             "parameters for weights need 998 B > 0 B usable (after a "
                             "536.9 MB default CUDA context reserve)");
    req.fit_params = 999;
    msg = expect_fail(ctx, "cuda:2", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:2 (Zero): 999 fp16 parameters for weights need 2.0 kB > "
                         "0 B usable");
    req.fit_params = 1000;
    msg = expect_fail(ctx, "cuda:2", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "1.0 K fp16 parameters for weights need 2.0 kB > 0 B usable");
    /* a successful call clears the last failure's message */
    assert_int_equal(pick(ctx, "cpu", NULL, 0, NULL), -1);
    gpuprobe_context_destroy(ctx);

    /* ranking without and with requirements */
    ctx = fake_ctx(&two);
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), 1);
    assert_string_equal(why, "auto: cuda:1 (Sim Big) has the most free memory "
                             "(70.0 GB) of 2 CUDA devices");
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 1;
    assert_int_equal(pick(ctx, "auto", &req, 0, &why), 1);
    assert_string_equal(why, "auto: cuda:1 (Sim Big) has the most free memory "
                             "(70.0 GB) of 2 CUDA devices that meet the requirements");
    msg = expect_fail(ctx, "cuda:2", NULL, 0, GPUPROBE_ERR_NOT_FOUND);
    assert_string_equal(msg, "cuda:2 was requested but only 2 CUDA devices are "
                             "visible (cuda:0 to cuda:1)");
    /* compute capability: equal passes, one minor more fails */
    req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    req.min_cc_major = 8;
    req.min_cc_minor = 6;
    assert_int_equal(pick(ctx, "cuda:0", &req, 0, &why), 0);
    assert_string_equal(why, "cuda:0: requested; cuda:0 (Sim Small)");
    req.min_cc_minor = 7;
    msg = expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_string_equal(msg, "cuda:0 (Sim Small): "
                             "compute capability 8.6 < 8.7 required");
    gpuprobe_context_destroy(ctx);

    ctx = fake_ctx(&one);
    msg = expect_fail(ctx, "cuda:1", NULL, 0, GPUPROBE_ERR_NOT_FOUND);
    assert_string_equal(msg, "cuda:1 was requested but only 1 CUDA device is visible "
                         "(cuda:0)");
    gpuprobe_context_destroy(ctx);

    /* the CUDA detail is shown up to 300 bytes */
    static char detail[401];
    memset(detail, 'D', 400);
    gp_fake_cuda long_detail = {GPUPROBE_CUDA_NO_DRIVER, detail, 0, NULL};
    ctx = fake_ctx(&long_detail);
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    char shown[320];
    memset(shown, 'D', 300);
    strcpy(shown + 300, "); using cpu");
    assert_contains(why, shown);
    assert_true(strstr(why, "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
                            "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
                            "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
                            "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
                            "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD") == NULL);
    gpuprobe_context_destroy(ctx);

    /* spec messages: which rule was broken */
    ctx = fake_ctx(&two);
    msg = expect_fail(ctx, "\x7f", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "control or non-ASCII byte");
    msg = expect_fail(ctx, "cu da", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strstr(msg, "control") == NULL);
    assert_contains(msg, "\"cu da\" is not valid; ");
    msg = expect_fail(ctx, "~", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strstr(msg, "control") == NULL);
    msg = expect_fail(ctx, "gpU", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "\"gpU\" is not valid (specs are lower case); ");
    /* A spec is quoted whole up to 40 bytes, then cut. */
    msg = expect_fail(ctx, "gpu-456789012345678901234567890123456789", NULL, 0,
                      GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "\"gpu-456789012345678901234567890123456789\" is not valid; ");
    msg = expect_fail(ctx, "gpu-456789012345678901234567890123456789x", NULL, 0,
                      GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "\"gpu-456789012345678901234567890123456789...\" is not valid; ");
    msg = expect_fail(ctx, "gpu", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strstr(msg, "lower case)") == NULL);
    static const char *const upper[] = {"gpuA", "gpuZ", "Auto"};
    static const char *const lower[] = {"gpu@", "gpu[", "gpua", "gpuz"};
    for (size_t i = 0; i < sizeof upper / sizeof upper[0]; i++)
        assert_contains(expect_fail(ctx, upper[i], NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT),
                        "(specs are lower case)");
    for (size_t i = 0; i < sizeof lower / sizeof lower[0]; i++)
        assert_true(strstr(expect_fail(ctx, lower[i], NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT),
                           "lower case)") == NULL);

    gpuprobe_context_destroy(ctx);

    /* decimal units: a whole unit at 1000, halves rounded up */
    ctx = fake_ctx(&edge); /* cuda:0 has 999 bytes free */
    static const struct {
        uint64_t bytes;
        const char *text;
    } units[] = {{1049, "1.0 kB"}, {1050, "1.1 kB"}, {999500, "999.5 kB"},
                 {1000000, "1.0 MB"},
                 {2500000000u, "2.5 GB"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
        r.min_free_bytes = units[i].bytes;
        char want[64];
        snprintf(want, sizeof want, "%s required", units[i].text);
        assert_contains(expect_fail(ctx, "cuda:0", &r, 0, GPUPROBE_ERR_NO_FIT), want);
    }
    gpuprobe_context_destroy(ctx);

    /* a minor-only compute capability requirement is a requirement */
    ctx = fake_ctx(&two);
    gpuprobe_requirements minor = GPUPROBE_REQUIREMENTS_INIT;
    minor.min_cc_minor = 1;
    assert_int_equal(pick(ctx, "auto", &minor, 0, &why), 1);
    assert_contains(why, "of 2 CUDA devices that meet the requirements");
    gpuprobe_context_destroy(ctx);
}

/* ---- the environment override ---- */

static void test_env_override(void **state)
{
    (void)state;
    const char *why = NULL;

    setenv("GPUPROBE_DEVICE", "cpu", 1);
    gpuprobe_context *ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE"); /* read at create: later changes are ignored */
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    assert_contains(why, "GPUPROBE_DEVICE");
    assert_int_equal(pick(ctx, "cuda:0", NULL, 0, NULL), -1);
    assert_int_equal(pick(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, &why), 1);
    assert_true(strstr(why, "GPUPROBE_DEVICE") == NULL);
    assert_int_equal(pick(ctx, "cuda:0", NULL, GPUPROBE_SELECT_IGNORE_ENV, NULL), 0);
    /* the program's spec is still checked, even when replaced */
    expect_fail(ctx, NULL, NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_context_destroy(ctx);

    setenv("GPUPROBE_DEVICE", "cuda:0", 1);
    ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE");
    assert_int_equal(pick(ctx, "cpu", NULL, 0, &why), 0);
    assert_contains(why, "cuda:0 (from GPUPROBE_DEVICE)");
    gpuprobe_context_destroy(ctx);

    /* empty is the same as unset: the program's spec stands */
    setenv("GPUPROBE_DEVICE", "", 1);
    ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE");
    assert_int_equal(pick(ctx, "cpu", NULL, 0, &why), -1);
    assert_null(strstr(why, "GPUPROBE_DEVICE"));
    gpuprobe_context_destroy(ctx);

    /* malformed */
    setenv("GPUPROBE_DEVICE", "gpu", 1);
    ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE");
    const char *msg = expect_fail(ctx, "auto", NULL, 0,
                                  GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "GPUPROBE_DEVICE");
    assert_contains(msg, "\"gpu\"");
    assert_int_equal(pick(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, NULL), 1);
    gpuprobe_context_destroy(ctx);

    /* explicit but unusable: no silent fallback */
    setenv("GPUPROBE_DEVICE", "cuda", 1);
    ctx = fake_ctx(&no_driver);
    unsetenv("GPUPROBE_DEVICE");
    msg = expect_fail(ctx, "auto", NULL, 0, GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_contains(msg, "GPUPROBE_DEVICE");
    assert_contains(msg, "no_driver");
    gpuprobe_context_destroy(ctx);

    /* longer than the context keeps */
    char longv[1000];
    memset(longv, 'x', sizeof longv - 1);
    memcpy(longv, "cuda:", 5);
    longv[sizeof longv - 1] = '\0';
    setenv("GPUPROBE_DEVICE", longv, 1);
    ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE");
    msg = expect_fail(ctx, "auto", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "GPUPROBE_DEVICE");
    assert_contains(msg, "\"cuda:xxx");
    assert_contains(msg, "...");
    assert_contains(msg, "longer than 255 bytes"); /* refused for its length */
    assert_true(strlen(msg) < 400);
    gpuprobe_context_destroy(ctx);

    /* one byte more than the context keeps: refused for its length */
    char over[257];
    memset(over, 'z', sizeof over - 1);
    over[sizeof over - 1] = '\0';
    setenv("GPUPROBE_DEVICE", over, 1);
    ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE");
    msg = expect_fail(ctx, "auto", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "longer than 255 bytes");
    gpuprobe_context_destroy(ctx);

    /* an exact-fit long value is still malformed (but not truncated) */
    char edge[256];
    memset(edge, 'y', sizeof edge - 1);
    edge[sizeof edge - 1] = '\0';
    setenv("GPUPROBE_DEVICE", edge, 1);
    ctx = fake_ctx(&two);
    unsetenv("GPUPROBE_DEVICE");
    msg = expect_fail(ctx, "auto", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strstr(msg, "longer than 255") == NULL);
    assert_contains(msg, "longer than 64 bytes"); /* refused as a spec */
    gpuprobe_context_destroy(ctx);
}

/* ---- malformed specs ---- */

static void test_malformed_specs(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "gpu", "cuda:", "cuda:-1", "cuda:+1", "cuda:1x", "cuda:01", "cuda:00",
        "cuda:99999999999999999999", "cuda:2147483648", "cuda:4294967296",
        "CUDA", "Cpu", "AUTO", "cuda:0:0", "cpu:0", "cuda0", "cud", "autox",
        " cuda", "cuda ", "cuda: 1", "cuda:1 ", "auto\n", "cuda:0x1", "cuda:1e3",
        "mps", "cuda:-0", "cuda::1", "cpu,cuda",
    };
    gpuprobe_context *ctx = fake_ctx(&two);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *msg = expect_fail(ctx, bad[i], NULL, 0,
                                      GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_printable_ascii(msg);
        /* printable specs are quoted verbatim */
        int printable = 1;
        for (const char *p = bad[i]; *p; p++)
            if ((unsigned char)*p < 0x20)
                printable = 0;
        if (printable) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
            assert_contains(msg, quoted);
        }
        gp_spec_kind kind = GP_SPEC_CPU;
        int index = 77;
        assert_int_equal(gp_parse_spec(ctx, bad[i], &kind, &index),
                         GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(kind, GP_SPEC_CPU);
        assert_int_equal(index, 77);
    }
    const char *msg = expect_fail(ctx, "CUDA", NULL, 0,
                                  GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "lower case");
    msg = expect_fail(ctx, "cuda:01", NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "leading zero");
    msg = expect_fail(ctx, "cuda:99999999999999999999", NULL, 0,
                      GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "larger than");
    msg = expect_fail(ctx, NULL, NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "NULL");

    /* 100 KB */
    size_t n = 100 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'a', n);
    big[n] = '\0';
    msg = expect_fail(ctx, big, NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "\"aaaaaaaaaa");
    assert_contains(msg, "...");
    assert_true(strlen(msg) < 400);
    memcpy(big, "cuda:", 5);
    memset(big + 5, '1', n - 5);
    msg = expect_fail(ctx, big, NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "\"cuda:1111");
    /* the length refusal starts after 64 bytes: 64 are parsed (and refused
     * as a spec), 65 are too long */
    memset(big, 'c', 65);
    big[64] = '\0';
    msg = expect_fail(ctx, big, NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strstr(msg, "longer than") == NULL);
    assert_contains(msg, "expected auto, cpu, cuda or cuda:N");
    big[64] = 'c';
    big[65] = '\0';
    msg = expect_fail(ctx, big, NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "longer than 64 bytes");
    free(big);

    /* non-ASCII and control bytes: replaced, never copied raw */
    static const char *const nasty[] = {
        "cu\xc3\xa4" "da", "cuda:\xd9\xa3", "\x1b[31mcuda\x1b[0m", "cuda\r",
        "cpu\t", "\x7f", "\xff\xfe\xfd", "auto\x01",
    };
    for (size_t i = 0; i < sizeof nasty / sizeof nasty[0]; i++) {
        msg = expect_fail(ctx, nasty[i], NULL, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_printable_ascii(msg);
        assert_contains(msg, "?");
    }
    msg = expect_fail(ctx, "\x1b[31mcuda\x1b[0m", NULL, 0,
                      GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "\"?[31mcuda?[0m\"");
    gpuprobe_context_destroy(ctx);
}

static void test_parse_valid(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        gp_spec_kind kind;
        int index;
    } ok[] = {
        {"", GP_SPEC_AUTO, -1},       {"auto", GP_SPEC_AUTO, -1},
        {"cpu", GP_SPEC_CPU, -1},     {"cuda", GP_SPEC_CUDA, -1},
        {"cuda:0", GP_SPEC_CUDA_N, 0}, {"cuda:7", GP_SPEC_CUDA_N, 7},
        {"cuda:10", GP_SPEC_CUDA_N, 10},
        {"cuda:2147483647", GP_SPEC_CUDA_N, INT_MAX},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        gp_spec_kind kind = (gp_spec_kind)99;
        int index = 99;
        assert_int_equal(gp_parse_spec(NULL, ok[i].spec, &kind, &index),
                         GPUPROBE_OK);
        assert_int_equal(kind, ok[i].kind);
        assert_int_equal(index, ok[i].index);
    }
    gp_spec_kind kind;
    int index;
    assert_int_equal(gp_parse_spec(NULL, NULL, &kind, &index),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_parse_spec(NULL, "cpu", NULL, &index), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_parse_spec(NULL, "cpu", &kind, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    size_t dev = NOT_SET;
    assert_int_equal(gpuprobe_select(NULL, "auto", NULL, 0, &dev, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_context *ctx = fake_ctx(&two);
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, 0, NULL, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    const char *msg = expect_fail(ctx, "auto", NULL, 2,
                                  GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "flags");
    expect_fail(ctx, "auto", NULL, 0x80000001u, GPUPROBE_ERR_INVALID_ARGUMENT);

    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.size = offsetof(gpuprobe_requirements, fit_workload);
    msg = expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "size");
    req.size = 0;
    expect_fail(ctx, "auto", &req, 0, GPUPROBE_ERR_INVALID_ARGUMENT);

    gpuprobe_requirements r2 = GPUPROBE_REQUIREMENTS_INIT;
    r2.min_cc_major = -1;
    expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    r2 = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    r2.fit_params = 1;
    r2.fit_dtype = GPUPROBE_DTYPE_FP8;
    r2.fit_workload = GPUPROBE_WORKLOAD_TRAINING;
    msg = expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_UNSUPPORTED);
    assert_contains(msg, "fp8");
    /* an unknown dtype or workload is the caller's error, said before any
     * device is looked at */
    r2.fit_dtype = 42;
    msg = expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_string_equal(msg, "gpuprobe_select: unknown fit_dtype 42 or fit_workload 2");
    r2.fit_dtype = GPUPROBE_DTYPE_FP16;
    r2.fit_workload = -1;
    msg = expect_fail(ctx, "cpu", &r2, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_string_equal(msg, "gpuprobe_select: unknown fit_dtype 3 or fit_workload -1");
    r2.fit_workload = GPUPROBE_WORKLOAD_WEIGHTS;
    r2.fit_params = GPUPROBE_MAX_PARAMS + 1;
    expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_OVERFLOW);
    /* the dtype/workload are ignored when fit_params is 0 */
    r2.fit_params = 0;
    r2.fit_dtype = 42;
    assert_int_equal(pick(ctx, "auto", &r2, 0, NULL), 1);

    /* the 1.1 fields: checked when the size covers them */
    r2 = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    r2.max_utilization = 101;
    msg = expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "max_utilization 101");
    r2.max_utilization = -2;
    expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    r2.max_utilization = -1;
    r2.no_other_process = 2;
    msg = expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_contains(msg, "no_other_process 2");
    /* a 1.0 caller's struct ends before them: whatever lies there is not
     * read (here: values that would be refused) */
    r2.max_utilization = 500;
    r2.size = offsetof(gpuprobe_requirements, fit_workload) + sizeof r2.fit_workload;
    assert_int_equal(pick(ctx, "auto", &r2, 0, NULL), 1);
    /* without NVML (the seam's devices have none) a GPU's utilisation and
     * processes are unknown: such a requirement excludes every GPU and the
     * CPU, and says why */
    r2 = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    r2.max_utilization = 100;
    msg = expect_fail(ctx, "auto", &r2, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Small): utilisation unknown (a simulated device of the test "
                         "seam has no NVML)");
    assert_null(strstr(msg, "GPUPROBE_ATTR"));
    assert_contains(msg, "cpu: not a CUDA device (a GPU utilisation limit required)");
    /* a limit of 0% (only an idle GPU) is a limit too */
    r2.max_utilization = 0;
    r2.no_other_process = 1;
    msg = expect_fail(ctx, "cpu", &r2, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cpu: not a CUDA device (a GPU utilisation limit required)");
    r2.no_other_process = 0;
    r2.max_utilization = -1;
    r2.no_other_process = 1;
    msg = expect_fail(ctx, "cuda", &r2, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "processes unknown");
    msg = expect_fail(ctx, "cpu", &r2, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "a GPU without other processes");

    /* a larger (later) requirements struct is accepted */
    struct {
        gpuprobe_requirements req;
        char later[32];
    } bigger;
    memset(&bigger, 0, sizeof bigger);
    bigger.req = (gpuprobe_requirements)GPUPROBE_REQUIREMENTS_INIT;
    bigger.req.size = sizeof bigger;
    assert_int_equal(pick(ctx, "auto", &bigger.req, 0, NULL), 1);

    /* reason is optional */
    dev = NOT_SET;
    assert_int_equal(gpuprobe_select(ctx, "cpu", NULL, 0, &dev, NULL), GPUPROBE_OK);
    assert_int_equal(dev, 0);
    gpuprobe_context_destroy(ctx);
}

/* Requirements are checked in their documented order and the first one a
 * GPU fails is the reason given: an unknown utilisation excludes it before
 * its (equally unknown) processes are asked about. */
static void test_requirement_order_unknown(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&two);
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.max_utilization = 50;
    req.no_other_process = 1;
    const char *msg = expect_fail(ctx, "cuda:0", &req, 0, GPUPROBE_ERR_NO_FIT);
    assert_contains(msg, "cuda:0 (Sim Small): utilisation unknown (");
    assert_null(strstr(msg, "processes unknown"));
    gpuprobe_context_destroy(ctx);
}

/* CUDA not usable: the reason gives the cause, then the detail after a
 * colon when there is one (even a single character), and no colon when
 * the detail is empty. */
static void test_unusable_detail_shown(void **state)
{
    (void)state;
    static const gp_fake_cuda bare = {GPUPROBE_CUDA_NO_DRIVER, "", 0, NULL};
    static const gp_fake_cuda terse = {GPUPROBE_CUDA_NO_DRIVER, "x", 0, NULL};
    const char *cause = gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DRIVER);
    char want[256];
    const char *why = NULL;

    gpuprobe_context *ctx = fake_ctx(&bare);
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    snprintf(want, sizeof want, "auto: CUDA not usable (%s); using cpu", cause);
    assert_string_equal(why, want);
    gpuprobe_context_destroy(ctx);

    ctx = fake_ctx(&terse);
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
    snprintf(want, sizeof want, "auto: CUDA not usable (%s: x); using cpu", cause);
    assert_string_equal(why, want);
    gpuprobe_context_destroy(ctx);
}

/* A failed selection leaves no earlier account behind: the context's
 * reason, which a previous success pointed to, reads empty. */
static void test_failed_select_clears_reason(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(&two);
    const char *why = NULL;
    assert_int_equal(pick(ctx, "auto", NULL, 0, &why), 1);
    assert_true(strlen(why) > 0);
    const char *kept = why;
    expect_fail(ctx, "auto", NULL, 0x100, GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_string_equal(kept, "");
    assert_int_equal(pick(ctx, "cuda:0", NULL, 0, &why), 0);
    assert_true(strlen(why) > 0);
    kept = why;
    /* no device pointer: refused, and the account is gone too */
    assert_int_equal(gpuprobe_select(ctx, "auto", NULL, 0, NULL, &why),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_string_equal(kept, "");
    gpuprobe_context_destroy(ctx);
}

/* A reason that runs past its buffer, by any number of bytes (one
 * included), is cut at the last byte and ends in "..."; one that fits is
 * whole. The name of one skipped GPU grows a byte at a time across the
 * edge. */
static void test_reason_cut_at_every_length(void **state)
{
    (void)state;
    static const char letters[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789++";
    char names[NAME_SHOWN_T + 1];
    /* three skipped GPUs with names of the most bytes shown, the one whose
     * name grows, and the one chosen */
    gp_fake_cuda_device devs[5];
    for (size_t i = 0; i < 4; i++)
        devs[i] = (gp_fake_cuda_device){
            "Simulated Accelerator With A Really Quite Long Product Name 0123", 8, 0,
            96 * GB, 10 * GB, 0};
    devs[4] = (gp_fake_cuda_device){"Sim Winner", 8, 0, 96 * GB, 90 * GB, 0};
    gp_fake_cuda fleet = {GPUPROBE_CUDA_AVAILABLE, "", 5, devs};
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.min_free_bytes = 50 * GB;
    int cut = 0, whole = 0;
    for (size_t len = 1; len <= NAME_SHOWN_T; len++) {
        memcpy(names, letters, len);
        names[len] = '\0';
        devs[3].name = names;
        gpuprobe_context *ctx = fake_ctx(&fleet);
        const char *why = NULL;
        assert_int_equal(pick(ctx, "auto", &req, 0, &why), 4);
        size_t n = strlen(why);
        char tail[NAME_SHOWN_T + 64];
        snprintf(tail, sizeof tail, "cuda:3 (%s): 10.0 GB free < 50.0 GB required", names);
        if (n >= strlen(tail) && strcmp(why + n - strlen(tail), tail) == 0) {
            whole++; /* all of it, up to the last byte the buffer holds */
        } else {
            cut++;
            if (n != GP_ERR_LEN - 1 || strcmp(why + n - 3, "...") != 0)
                fail_msg("name of %zu bytes: neither whole nor cut with \"...\": \"%s\"",
                         len, why);
        }
        gpuprobe_context_destroy(ctx);
    }
    /* the edge was crossed */
    assert_true(cut > 0);
    assert_true(whole > 0);
}

/* ---- the real machine ---- */

static void test_real_machine(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fake_ctx(NULL);
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = NULL;
    assert_int_equal(gpuprobe_cuda_status(ctx, &cause, &detail), GPUPROBE_OK);
    const char *why = NULL;
    if (cause != GPUPROBE_CUDA_AVAILABLE) {
        /* A machine without a usable GPU (CI): the lesson's fallback. */
        assert_int_equal(pick(ctx, "auto", NULL, 0, &why), -1);
        assert_contains(why, "CUDA not usable");
        assert_contains(why, gpuprobe_cuda_cause_string(cause));
        assert_contains(why, "using cpu");
        const char *msg = expect_fail(ctx, "cuda", NULL, 0,
                                      GPUPROBE_ERR_CUDA_UNAVAILABLE);
        assert_contains(msg, gpuprobe_cuda_cause_name(cause));
        assert_contains(msg, gpuprobe_cuda_cause_string(cause));
        expect_fail(ctx, "cuda:0", NULL, 0, GPUPROBE_ERR_CUDA_UNAVAILABLE);
    } else {
        /* A GPU machine: auto picks a GPU; cuda:N out of range is NOT_FOUND. */
        assert_true(pick(ctx, "auto", NULL, 0, &why) >= 0);
        assert_true(pick(ctx, "cuda", NULL, 0, NULL) >= 0);
        assert_int_equal(pick(ctx, "cuda:0", NULL, 0, NULL), 0);
        expect_fail(ctx, "cuda:2147483647", NULL, 0, GPUPROBE_ERR_NOT_FOUND);
    }
    assert_int_equal(pick(ctx, "cpu", NULL, 0, NULL), -1);
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    unsetenv("GPUPROBE_DEVICE");
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_gpu),
        cmocka_unit_test(test_available_without_devices),
        cmocka_unit_test(test_one_gpu),
        cmocka_unit_test(test_two_gpus_most_free),
        cmocka_unit_test(test_tie_lowest_ordinal),
        cmocka_unit_test(test_requirements_skip),
        cmocka_unit_test(test_requirements_fit),
        cmocka_unit_test(test_requirements_model),
        cmocka_unit_test(test_nothing_fits),
        cmocka_unit_test(test_all_hidden),
        cmocka_unit_test(test_many_devices_bounded),
        cmocka_unit_test(test_cpu_fallback_by_cpu_memory),
        cmocka_unit_test(test_candidate_query_fails),
        cmocka_unit_test(test_messages_exact),
        cmocka_unit_test(test_skipped_list_cut),
        cmocka_unit_test(test_env_override),
        cmocka_unit_test(test_malformed_specs),
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_requirement_order_unknown),
        cmocka_unit_test(test_unusable_detail_shown),
        cmocka_unit_test(test_failed_select_clears_reason),
        cmocka_unit_test(test_reason_cut_at_every_length),
        cmocka_unit_test(test_real_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
