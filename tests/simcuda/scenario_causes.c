/*
 * scenario_causes.c - every named CUDA cause, reached through the library's
 * real loader and the simulated libraries: no runtime, no driver, no kernel
 * driver, driver too old (and the libcudart.so.12 fallback), no device,
 * devices hidden (and not hidden), no permission, disabled, other; and a
 * runtime without its cuBLAS.
 *
 * What the kernel side looks like (/proc/driver/nvidia, /dev/nvidia*) is
 * a fake tree given to the library through its sysroot test seam, which is
 * why this program links the internal archive; the CUDA libraries are the
 * simulated ones, found as on any machine.
 *
 *   scenario_causes             the causes one process can reach
 *   scenario_causes no-driver   run without the simulated driver on the
 *                               loader's path (its own ctest entry)
 *   scenario_causes failed-init cuInit failing in a process that has loaded
 *                               no CUDA library yet (its own ctest entry)
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
#include <malloc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "scenario.h"
#include "sysroot_util.h"

#define H200 "[gpu]\npreset = H200\n"
#define TWO                                                                   \
    "[gpu]\npreset = A100-40GB\nuuid = GPU-5e1e0000-a100-4000-8000-00000000000a\n" \
    "[gpu]\npreset = H200\nuuid = GPU-5e1e0000-4200-4000-8000-00000000000b\n"

static char root[256];

/* The kernel side: the driver's files (kernel != 0), and `gpus` entries
 * in /proc/driver/nvidia/gpus (-1: no such directory). */
static void make_root(int kernel, int gpus)
{
    snprintf(root, sizeof root, "%s/gpuprobe-causes-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(root));
    assert_int_equal(chmod(root, 0755), 0);
    sr_put(root, "proc/self/status", "Name:\ttest\n");
    if (kernel) {
        sr_put(root, "proc/driver/nvidia/version", "NVRM version: simulated\n");
        sr_put(root, "dev/nvidiactl", "");
        sr_put(root, "dev/nvidia0", "");
    }
    char p[GP_PATH_LEN];
    if (gpus >= 0) {
        snprintf(p, sizeof p, "%s/proc/driver/nvidia/gpus", root);
        sr_mkdirs(p);
    }
    for (int i = 0; i < gpus; i++) {
        snprintf(p, sizeof p, "%s/proc/driver/nvidia/gpus/0000:%02x:00.0", root, 0x21 + i * 0x60);
        sr_mkdirs(p);
    }
}

static gpuprobe_context *probe(void)
{
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    return ctx;
}

static void use_libdir(const char *sub)
{
    if (sub)
        assert_int_equal(setenv("GPUPROBE_CUDA_LIBDIR", sub, 1), 0);
    else
        unsetenv("GPUPROBE_CUDA_LIBDIR");
}

static int teardown(void **state)
{
    (void)state;
    if (root[0])
        sr_rm_tree(root);
    root[0] = '\0';
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUPROBE_CUDA");
    return 0;
}

typedef struct cause_case {
    const char *what;
    const char *fleet;
    const char *cvd;       /* CUDA_VISIBLE_DEVICES, NULL: unset */
    const char *libdir;    /* GPUPROBE_CUDA_LIBDIR, NULL: unset */
    int kernel, proc_gpus; /* the fake kernel side (make_root) */
    gpuprobe_cuda_cause want;
    const char *detail;    /* a part of the detail */
} cause_case;

#define NO_DEVICE_TWO "cuinit_error = CUDA_ERROR_NO_DEVICE\n" TWO
#define X16 "xxxxxxxxxxxxxxxx"
#define X128 X16 X16 X16 X16 X16 X16 X16 X16

/* The names gp_dlsym() is told are missing, "a,b,c". */
static const char *hidden;

static int hide(const char *name)
{
    size_t len = strlen(name);
    for (const char *p = hidden; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strcspn(p, ",") == len && strncmp(p, name, len) == 0)
            return 1;
    }
    return 0;
}

static const cause_case cases[] = {
    {"a working H200", H200, NULL, NULL, 1, 1, GPUPROBE_CUDA_AVAILABLE,
     "1 CUDA device(s); driver supports CUDA 13.0, runtime 13.0"},
    {"no runtime in GPUPROBE_CUDA_LIBDIR", H200, NULL, SIMCUDA_DIR "/empty", 1, 1,
     GPUPROBE_CUDA_NO_RUNTIME, "holds none of libcudart.so.13, libcudart.so.12, libcudart.so.11 ("},
    {"a 12.8 driver: libcudart.so.12 instead of 13", "driver_version = 12.8\n" H200, NULL,
     SIMCUDA_DIR "/lib", 1, 1, GPUPROBE_CUDA_AVAILABLE, "runtime 12.8 (" SIMCUDA_DIR "/lib/libcudart.so.12)"},
    {"only libcudart.so.12 there", H200, NULL, SIMCUDA_DIR "/rt12", 1, 1, GPUPROBE_CUDA_AVAILABLE,
     "runtime 12.8"},
    {"driver too old for the only runtime", "driver_version = 12.4\n" H200, NULL, SIMCUDA_DIR "/rt13",
     1, 1, GPUPROBE_CUDA_DRIVER_TOO_OLD, "driver supports CUDA 12.4, runtime is 13.0"},
    {"driver too old, as the runtime finds it", "driver_version = 12.4\nfail = cuDriverGetVersion:1\n" H200,
     NULL, SIMCUDA_DIR "/rt13", 1, 1, GPUPROBE_CUDA_DRIVER_TOO_OLD, "cudaErrorInsufficientDriver"},
    {"no kernel driver", "cuinit_error = CUDA_ERROR_UNKNOWN\nnvml_init_error = NVML_ERROR_DRIVER_NOT_LOADED\n" H200,
     NULL, NULL, 0, -1, GPUPROBE_CUDA_NO_KERNEL_DRIVER, "/proc/driver/nvidia/version is missing"},
    {"no GPU", "", NULL, NULL, 1, 0, GPUPROBE_CUDA_NO_DEVICE, "lists no GPU"},
    {"no GPU, CUDA_VISIBLE_DEVICES set", "", "0", NULL, 1, 0, GPUPROBE_CUDA_NO_DEVICE, "no GPU"},
    {"CUDA_VISIBLE_DEVICES empty", TWO, "", NULL, 1, 2, GPUPROBE_CUDA_DEVICES_HIDDEN,
     "CUDA_VISIBLE_DEVICES is set to \"\", which hides all 2 GPU(s)"},
    {"CUDA_VISIBLE_DEVICES past the GPUs", TWO, "5,0", NULL, 1, 2, GPUPROBE_CUDA_DEVICES_HIDDEN,
     "hides all 2 GPU(s)"},
    {"CUDA_VISIBLE_DEVICES names no GPU", TWO, "GPU-ffff", NULL, 1, 2, GPUPROBE_CUDA_DEVICES_HIDDEN,
     "hides all 2 GPU(s)"},
    {"CUDA_VISIBLE_DEVICES selects GPUs CUDA cannot use",
     "cuinit_error = CUDA_ERROR_NO_DEVICE\n" TWO, "0,1", NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE,
     "CUDA_VISIBLE_DEVICES=\"0,1\" selects"},
    {"CUDA_VISIBLE_DEVICES selects by UUID", "cuinit_error = CUDA_ERROR_NO_DEVICE\n" TWO,
     "GPU-5e1e0000-a1", NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE, "selects"},
    {"a MIG entry cannot be checked", "cuinit_error = CUDA_ERROR_NO_DEVICE\n" TWO, "MIG-1234",
     NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE, "cannot be told: its first entry is a UUID"},
    {"hidden, GPUs counted by the kernel driver (no NVML)",
     "nvml_init_error = NVML_ERROR_DRIVER_NOT_LOADED\n" TWO, "", NULL, 1, 2,
     GPUPROBE_CUDA_DEVICES_HIDDEN, "hides all 2 GPU(s)"},
    {"cannot tell whether anything is hidden",
     "nvml_init_error = NVML_ERROR_DRIVER_NOT_LOADED\n" TWO, "", NULL, 1, -1,
     GPUPROBE_CUDA_NO_DEVICE, "CUDA_VISIBLE_DEVICES is set to \"\""},
    {"hidden, the kernel files unseen but NVML working",
     "cuinit_error = CUDA_ERROR_NO_DEVICE\n" TWO, "", NULL, 0, -1, GPUPROBE_CUDA_DEVICES_HIDDEN,
     "hides all 2 GPU(s)"},
    {"cuInit fails otherwise", "cuinit_error = CUDA_ERROR_UNKNOWN\n" H200, NULL, NULL, 1, 1,
     GPUPROBE_CUDA_OTHER, "cuInit failed with CUDA_ERROR_UNKNOWN"},
    /* cuInit found a device but the runtime none: the detail says which
     * call answered what. */
    {"cudaGetDeviceCount finds no device", "fail = cudaGetDeviceCount:1=cudaErrorNoDevice\n" H200,
     NULL, NULL, 1, 1, GPUPROBE_CUDA_NO_DEVICE,
     "cudaGetDeviceCount: cudaErrorNoDevice: the driver is running and lists no GPU"},
    {"cudaGetDeviceCount fails", "fail = cudaGetDeviceCount:1=cudaErrorStartupFailure\n" H200, NULL,
     NULL, 1, 1, GPUPROBE_CUDA_OTHER,
     "cudaGetDeviceCount failed with cudaErrorStartupFailure (simulated CUDA runtime error)"},
    {"a device cannot be had (cuDeviceGet)", "fail = cuDeviceGet:1=CUDA_ERROR_INVALID_DEVICE\n" H200,
     NULL, NULL, 1, 1, GPUPROBE_CUDA_OTHER, "cuDeviceGet(0) failed with CUDA_ERROR_INVALID_DEVICE"},
    /* A code the driver has no name for (cuGetErrorName: INVALID_VALUE,
     * NULL name): the message says so rather than printing nothing. */
    {"a driver error without a name", "fail = cuDeviceGet:1=4242\n" H200, NULL, NULL, 1, 1,
     GPUPROBE_CUDA_OTHER, "cuDeviceGet(0) failed with unrecognized CUDA driver error"},
    /* A driver error's name is cut after 48 bytes, a runtime error's
     * description after 128. */
    {"a long driver error name", "error_name = " X16 X16 X16 "y\nfail = cuDeviceGet:1\n" H200,
     NULL, NULL, 1, 1, GPUPROBE_CUDA_OTHER, "cuDeviceGet(0) failed with " X16 X16 X16 "..."},
    {"a driver error name of 48 bytes", "error_name = " X16 X16 X16 "\nfail = cuDeviceGet:1\n" H200,
     NULL, NULL, 1, 1, GPUPROBE_CUDA_OTHER, "cuDeviceGet(0) failed with " X16 X16 X16},
    {"a long runtime error description",
     "error_text = " X128 "y\nfail = cudaGetDeviceCount:1=cudaErrorStartupFailure\n" H200, NULL,
     NULL, 1, 1, GPUPROBE_CUDA_OTHER,
     "cudaGetDeviceCount failed with cudaErrorStartupFailure (" X128 "...)"},
    {"a runtime error description of 128 bytes",
     "error_text = " X128 "\nfail = cudaGetDeviceCount:1=cudaErrorStartupFailure\n" H200, NULL,
     NULL, 1, 1, GPUPROBE_CUDA_OTHER,
     "cudaGetDeviceCount failed with cudaErrorStartupFailure (" X128 ")"},
    /* CUDA_VISIBLE_DEVICES as CUDA reads it: blanks around an entry, an
     * index at or past the count, digit by digit. */
    {"a blank before the index", NO_DEVICE_TWO, " 1", NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE,
     "CUDA_VISIBLE_DEVICES=\" 1\" selects"},
    {"a blank after the index", NO_DEVICE_TWO, "1\t ,0", NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE,
     "selects"},
    {"an index equal to the count", TWO, "2", NULL, 1, 2, GPUPROBE_CUDA_DEVICES_HIDDEN,
     "hides all 2 GPU(s)"},
    {"an index past the count, its first digit below it", TWO, "10", NULL, 1, 2,
     GPUPROBE_CUDA_DEVICES_HIDDEN, "hides all 2 GPU(s)"},
    {"an index with a leading zero", NO_DEVICE_TWO, "01", NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE,
     "selects"},
    {"an index of many digits", TWO, "99999999999999999999999", NULL, 1, 2,
     GPUPROBE_CUDA_DEVICES_HIDDEN, "hides all 2 GPU(s)"},
    /* A UUID entry NVML cannot check: it lacks a function, or one fails
     * (the second GPU's, after the first GPU's UUID matched). */
    {"NVML's UUID query fails", "fail = nvmlDeviceGetUUID:2\n" NO_DEVICE_TWO, "GPU-5e1e0000-a1",
     NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE, "its first entry is a UUID NVML cannot check"},
    {"NVML's lookup by index fails", "fail = nvmlDeviceGetHandleByIndex_v2:1\n" NO_DEVICE_TWO,
     "GPU-5e1e0000-a1", NULL, 1, 2, GPUPROBE_CUDA_NO_DEVICE,
     "its first entry is a UUID NVML cannot check"},
    {"NVML's count fails: the kernel driver's", "fail_late = nvmlDeviceGetCount_v2:1\n" TWO, "",
     NULL, 1, 3, GPUPROBE_CUDA_DEVICES_HIDDEN, "hides all 3 GPU(s)"},
    {"three GPUs counted by the kernel driver (no NVML)",
     "nvml_init_error = NVML_ERROR_DRIVER_NOT_LOADED\n" TWO, "", NULL, 1, 3,
     GPUPROBE_CUDA_DEVICES_HIDDEN, "hides all 3 GPU(s)"},
    {"a runtime error name of 48 bytes",
     "error_name = " X16 X16 X16 "\nfail = cudaGetDeviceCount:1=cudaErrorStartupFailure\n" H200,
     NULL, NULL, 1, 1, GPUPROBE_CUDA_OTHER, "cudaGetDeviceCount failed with " X16 X16 X16 " ("},
    {"a long runtime error name",
     "error_name = " X16 X16 X16 "y\nfail = cudaGetDeviceCount:1=cudaErrorStartupFailure\n" H200,
     NULL, NULL, 1, 1, GPUPROBE_CUDA_OTHER, "cudaGetDeviceCount failed with " X16 X16 X16 "... ("},
    /* A relative GPUPROBE_CUDA_LIBDIR is refused, quoted whole up to 96
     * bytes. */
    {"a relative libdir of 96 bytes", H200, NULL, X16 X16 X16 X16 X16 X16, 1, 1,
     GPUPROBE_CUDA_OTHER,
     "GPUPROBE_CUDA_LIBDIR=\"" X16 X16 X16 X16 X16 X16 "\" is not an absolute path"},
    {"a relative libdir of 97 bytes", H200, NULL, X16 X16 X16 X16 X16 X16 "y", 1, 1,
     GPUPROBE_CUDA_OTHER,
     "GPUPROBE_CUDA_LIBDIR=\"" X16 X16 X16 X16 X16 X16 "...\" is not an absolute path"},
    /* GPUPROBE_CUDA_LIBDIR in the message: quoted whole up to 128 bytes. */
    {"a libdir of 128 bytes", H200, NULL, "/" X16 X16 X16 X16 X16 X16 X16 "xxxxxxxxxxxxxxx", 1, 1,
     GPUPROBE_CUDA_NO_RUNTIME,
     "GPUPROBE_CUDA_LIBDIR=\"/" X16 X16 X16 X16 X16 X16 X16 "xxxxxxxxxxxxxxx\" holds none of"},
    {"a libdir of 129 bytes", H200, NULL, "/" X128, 1, 1, GPUPROBE_CUDA_NO_RUNTIME,
     "GPUPROBE_CUDA_LIBDIR=\"/" X16 X16 X16 X16 X16 X16 X16 "xxxxxxxxxxxxxxx...\" holds none of"},
    /* The driver's version: only a successful answer above 0 is taken. */
    {"the driver's version query fails", "fail_late = cuDriverGetVersion:1\n" H200, NULL, NULL, 1,
     1, GPUPROBE_CUDA_AVAILABLE, "driver supports CUDA unknown, runtime 13.0"},
    {"the runtime's version query fails", "fail_late = cudaRuntimeGetVersion:1\n" H200, NULL,
     NULL, 1, 1, GPUPROBE_CUDA_AVAILABLE, "driver supports CUDA 13.0, runtime unknown"},
    {"a driver that says it supports CUDA 0.01", "driver_version = 1\n" H200, NULL, NULL, 1, 1,
     GPUPROBE_CUDA_DRIVER_TOO_OLD, "driver supports CUDA 0.0, runtime is 13.0: update"},
};

/* Libraries lacking a function (gp_test_dlsym_hide), in every one that
 * has it. */
static const struct {
    cause_case c;
    const char *hide; /* "a,b" */
} lacking[] = {
    {{"NVML lacks the UUID query", NO_DEVICE_TWO, "GPU-5e1e0000-a1", NULL, 1, 2,
      GPUPROBE_CUDA_NO_DEVICE, "its first entry is a UUID NVML cannot check"},
     "nvmlDeviceGetUUID"},
    {{"NVML lacks the lookup by index", NO_DEVICE_TWO, "GPU-5e1e0000-a1", NULL, 1, 2,
      GPUPROBE_CUDA_NO_DEVICE, "its first entry is a UUID NVML cannot check"},
     "nvmlDeviceGetHandleByIndex_v2"},
    {{"NVML lacks the count: the kernel driver's", TWO, "", NULL, 1, 3,
      GPUPROBE_CUDA_DEVICES_HIDDEN, "hides all 3 GPU(s)"},
     "nvmlDeviceGetCount_v2"},
};

static void one_case(const cause_case *c, const char *hide_these)
{
    print_message("case: %s\n", c->what);
    if (c->cvd)
        assert_int_equal(setenv("CUDA_VISIBLE_DEVICES", c->cvd, 1), 0);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
    use_libdir(c->libdir);
    fleet(c->fleet);
    make_root(c->kernel, c->proc_gpus);
    hidden = hide_these;
    gp_test_dlsym_hide = hide_these ? hide : NULL;
    gpuprobe_context *ctx = probe();
    const char *detail = NULL;
    gpuprobe_cuda_cause got = cause_of(ctx, &detail);
    gp_test_dlsym_hide = NULL;
    if (got != c->want || !strstr(detail, c->detail))
        fail_msg("%s: cause %s (%s), want %s with \"%s\"", c->what, gpuprobe_cuda_cause_name(got),
                 detail, gpuprobe_cuda_cause_name(c->want), c->detail);
    assert_only_simulated_cuda();
    size_t n = 0, dev = 9;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    if (c->want == GPUPROBE_CUDA_AVAILABLE) {
        assert_true(n > 1);
    } else {
        assert_int_equal(n, 1);
        EXPECT(ctx, gpuprobe_select(ctx, "cuda", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL),
               GPUPROBE_ERR_CUDA_UNAVAILABLE);
        assert_contains(gpuprobe_last_error(ctx), gpuprobe_cuda_cause_name(c->want));
        EXPECT(ctx, gpuprobe_select(ctx, "auto", NULL, GPUPROBE_SELECT_IGNORE_ENV, &dev, NULL),
               GPUPROBE_OK);
        assert_int_equal(dev, 0);
    }
    gpuprobe_context_destroy(ctx);
    teardown(NULL);
}

static void every_cause(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        one_case(&cases[i], NULL);
    for (size_t i = 0; i < sizeof lacking / sizeof lacking[0]; i++)
        one_case(&lacking[i].c, lacking[i].hide);
}

/* With a 12.x driver the CUDA 12 runtime is used, and cuBLAS 12 with it. */
static void runtime12_fallback_matmul(void **state)
{
    (void)state;
    use_libdir(SIMCUDA_DIR "/lib");
    fleet("driver_version = 12.8\n" H200);
    make_root(1, 1);
    gpuprobe_context *ctx = probe();
    int v = 0;
    EXPECT(ctx, gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 12080);
    EXPECT(ctx, gpuprobe_cuda_driver_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 12080);
    gpuprobe_matmul_options *o = mm_options(20, 30, 40, GPUPROBE_DTYPE_FP16);
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    const char *backend = NULL;
    assert_int_equal(gpuprobe_matmul_result_get_string(r, GPUPROBE_METRIC_BACKEND, &backend), GPUPROBE_OK);
    assert_contains(backend, "cuBLAS 12.9.1");
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    gpuprobe_context_destroy(ctx);
}

/* A runtime whose directory has no cuBLAS: CUDA is available, a matmul is
 * refused naming the cuBLAS file it looked for, quoted whole up to 128
 * bytes and cut after them. The directory holds a link to the simulated
 * runtime, loaded first from the simulation's own directory, so that the
 * link opens that same library. */
static void cublas_missing_named(void **state)
{
    (void)state;
    static const char file[] = "/libcublas.so.13";
    fleet(H200);
    make_root(1, 1);
    if (strlen(root) + 1 + (sizeof file - 1) >= 128)
        skip(); /* TMPDIR too long for a path of 128 bytes */
    gpuprobe_context *ctx = probe();
    assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_AVAILABLE);
    gpuprobe_context_destroy(ctx);
    for (size_t len = 128; len <= 129; len++) {
        /* root/dd...d, as long as makes <dir>/libcublas.so.13 len bytes */
        char dir[sizeof root + 160], path[GP_PATH_LEN], want[GP_PATH_LEN];
        size_t pad = len - (sizeof file - 1) - strlen(root) - 1;
        snprintf(dir, sizeof dir, "%s/", root);
        memset(dir + strlen(dir), 'd', pad);
        dir[strlen(root) + 1 + pad] = '\0';
        sr_mkdirs(dir);
        snprintf(path, sizeof path, "%s/libcudart.so.13", dir);
        assert_int_equal(symlink(SIMCUDA_DIR "/lib/libcudart.so.13", path), 0);
        snprintf(path, sizeof path, "%s%s", dir, file);
        assert_int_equal(strlen(path), len);
        use_libdir(dir);
        ctx = probe();
        const char *detail = NULL;
        assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_AVAILABLE);
        gpuprobe_matmul_options *o = mm_options(8, 8, 8, GPUPROBE_DTYPE_FP32);
        gpuprobe_matmul_result *r = NULL;
        EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_CUDA_UNAVAILABLE);
        assert_null(r);
        snprintf(want, sizeof want, "cannot load cuBLAS %.128s%s (matching the CUDA 13 runtime): ",
                 path, len > 128 ? "..." : "");
        assert_contains(gpuprobe_last_error(ctx), want);
        gpuprobe_matmul_options_destroy(o);
        gpuprobe_context_destroy(ctx);
    }
    assert_only_simulated_cuda();
}

static void disabled_loads_nothing(void **state)
{
    (void)state;
    fleet(H200);
    simcuda_log_clear();
    assert_int_equal(setenv("GPUPROBE_CUDA", "off", 1), 0);
    make_root(1, 1);
    gpuprobe_context *ctx = probe();
    assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_DISABLED);
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(simcuda_log_size(), 0);
    gpuprobe_context_destroy(ctx);
}

/* A device node the user may not open: NO_PERMISSION naming it, for the
 * nodes CUDA opens (nvidiactl, nvidia-uvm, nvidiaN); another node of the
 * driver's (nvidia-modeset) is not blamed. Root may open anything, so each
 * probe runs in a child that has given up root. */
static void no_permission(void **state)
{
    (void)state;
    static const struct {
        const char *node;
        gpuprobe_cuda_cause want;
        const char *detail;
    } nodes[] = {
        {"nvidia0", GPUPROBE_CUDA_NO_PERMISSION, "no read/write permission on /dev/nvidia0"},
        {"nvidiactl", GPUPROBE_CUDA_NO_PERMISSION, "no read/write permission on /dev/nvidiactl"},
        {"nvidia-uvm", GPUPROBE_CUDA_NO_PERMISSION, "no read/write permission on /dev/nvidia-uvm"},
        {"nvidia-modeset", GPUPROBE_CUDA_NO_DEVICE, "lists no GPU"},
    };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        print_message("denied: /dev/%s\n", nodes[i].node);
        fleet("cuinit_error = CUDA_ERROR_NO_DEVICE\n" H200);
        make_root(1, 1);
        char rel[64], node[sizeof root + 64];
        snprintf(rel, sizeof rel, "dev/%s", nodes[i].node);
        sr_put(root, rel, "");
        /* Every node open to all but the one tested. */
        static const char *const open_to_all[] = {"nvidiactl", "nvidia0"};
        for (size_t k = 0; k < sizeof open_to_all / sizeof open_to_all[0]; k++) {
            snprintf(node, sizeof node, "%s/dev/%s", root, open_to_all[k]);
            assert_int_equal(chmod(node, 0666), 0);
        }
        snprintf(node, sizeof node, "%s/dev/%s", root, nodes[i].node);
        assert_int_equal(chmod(node, 0), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
                _exit(100);
            gpuprobe_context *ctx = NULL;
            gpuprobe_cuda_cause cause = GPUPROBE_CUDA_AVAILABLE;
            const char *detail = NULL;
            if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
                _exit(101);
            gp_test_set_sysroot(ctx, root);
            if (gpuprobe_cuda_status(ctx, &cause, &detail) != GPUPROBE_OK)
                _exit(102);
            if (!strstr(detail, nodes[i].detail)) {
                fprintf(stderr, "detail: %s\n", detail);
                _exit(103);
            }
            /* exit(), not _exit(): a coverage build writes this process's
             * line counts at exit, and only this child runs the lines that
             * find the node it may not open. */
            exit((int)cause);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 100)
            fail_msg("could not drop root to test permissions");
        assert_int_equal(WEXITSTATUS(status), nodes[i].want);
        teardown(NULL);
    }
}

/* A device node that cannot be opened for another reason than permission
 * (a dangling link: ENOENT, whoever asks): not blamed. */
static void dangling_node_not_blamed(void **state)
{
    (void)state;
    fleet("cuinit_error = CUDA_ERROR_NO_DEVICE\n" H200);
    make_root(1, 1);
    char node[sizeof root + 64];
    snprintf(node, sizeof node, "%s/dev/nvidia1", root);
    assert_int_equal(symlink("nvidia-gone", node), 0);
    gpuprobe_context *ctx = probe();
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_DEVICE);
    assert_contains(detail, "the driver is running and lists no GPU");
    gpuprobe_context_destroy(ctx);
}

/* The driver is absent: the runtime loads (from GPUPROBE_CUDA_LIBDIR),
 * libcuda.so.1 does not. */
static void no_driver(void **state)
{
    (void)state;
    use_libdir(SIMCUDA_DIR "/lib");
    make_root(0, -1);
    gpuprobe_context *ctx = probe();
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_DRIVER);
    assert_contains(detail, "libcuda.so.1 was not found by the system loader");
    int v = 0;
    EXPECT(ctx, gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 13000);
    EXPECT(ctx, gpuprobe_cuda_driver_version(ctx, &v), GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_only_simulated_cuda();
    gpuprobe_context_destroy(ctx);
}

/* Whether a library whose file name is base is mapped in this process. */
static int find_object(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    const char *path = info->dlpi_name ? info->dlpi_name : "";
    const char *slash = strrchr(path, '/');
    return strcmp(slash ? slash + 1 : path, (const char *)base) == 0;
}

static int loaded(const char *base)
{
    return dl_iterate_phdr(find_object, (void *)base) != 0;
}

/* A CUDA library the library initialised (cuInit, a runtime call) runs
 * threads and exit handlers of its own, so gpuprobe_context_destroy()
 * leaves it mapped; closing it could unmap code that still runs. This
 * program never opens a CUDA library itself, so only the library's own
 * handles keep libcudart mapped. (libcuda.so.1 is also kept open by the
 * initialised runtime, as the real runtime does, so here it would stay
 * mapped even if the library closed its own handle.) */
static void initialised_libraries_stay_loaded(void **state)
{
    (void)state;
    fleet(H200);
    make_root(1, 1);
    gpuprobe_context *ctx = probe();
    size_t n = 0;
    EXPECT(ctx, gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
    assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_AVAILABLE);
    gpuprobe_context_destroy(ctx);
    assert_true(loaded("libcuda.so.1"));
    assert_true(loaded("libcudart.so.13"));
}

/* A failed decision gives back what it allocated: the same failing probe,
 * repeated, does not grow the heap. Both scans of the kernel side run in
 * each (the device nodes after cuInit's failure, again for "no device"),
 * and NVML is loaded and unloaded. (Under AddressSanitizer, which keeps
 * its own heap, mallinfo2 sees nothing: its leak check does this job.) */
static void failed_probe_leaks_nothing(void **state)
{
    (void)state;
    assert_int_equal(setenv("CUDA_VISIBLE_DEVICES", "0", 1), 0);
    fleet("cuinit_error = CUDA_ERROR_NO_DEVICE\n" TWO);
    make_root(1, 2);
    size_t before = 0;
    for (int i = 0; i < 40; i++) {
        if (i == 8) /* what the first probes set up once is there by now */
            before = mallinfo2().uordblks;
        gpuprobe_context *ctx = probe();
        const char *detail = NULL;
        assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_NO_DEVICE);
        assert_contains(detail, "CUDA_VISIBLE_DEVICES=\"0\" selects");
        gpuprobe_context_destroy(ctx);
    }
    size_t after = mallinfo2().uordblks;
    /* Each leaked path would be a block of 32 bytes or more, twice a
     * probe: 2 KiB in all at the least. */
    if (after > before + 1024)
        fail_msg("32 failed probes left %zu bytes more on the heap", after - before);
}

/* cuInit was called, and failed: the driver may still run threads and exit
 * handlers of its own, so it stays mapped after gpuprobe_context_destroy();
 * the runtime, only opened and asked its version, is closed. A run of its
 * own: no other test may have loaded a CUDA library before. */
static void failed_init_keeps_driver(void **state)
{
    (void)state;
    assert_false(loaded("libcuda.so.1"));
    assert_false(loaded("libcudart.so.13"));
    fleet("cuinit_error = CUDA_ERROR_UNKNOWN\n" H200);
    make_root(1, 1);
    gpuprobe_context *ctx = probe();
    const char *detail = NULL;
    assert_int_equal(cause_of(ctx, &detail), GPUPROBE_CUDA_OTHER);
    assert_contains(detail, "cuInit failed with CUDA_ERROR_UNKNOWN");
    assert_true(loaded("libcuda.so.1"));
    assert_true(loaded("libcudart.so.13"));
    gpuprobe_context_destroy(ctx);
    assert_true(loaded("libcuda.so.1"));
    assert_false(loaded("libcudart.so.13"));
}

/* A 12.x driver in a process that has loaded no CUDA library before: the
 * CUDA 13 runtime, opened first and found too new (only its version was
 * read), is closed again when the CUDA 12 runtime replaces it; only the
 * runtime in use stays mapped. A run of its own, like the one above. */
static void too_new_runtime_closed(void **state)
{
    (void)state;
    assert_false(loaded("libcudart.so.13"));
    assert_false(loaded("libcudart.so.12"));
    fleet("driver_version = 12.8\n" H200);
    make_root(1, 1);
    gpuprobe_context *ctx = probe();
    int v = 0;
    EXPECT(ctx, gpuprobe_cuda_runtime_version(ctx, &v), GPUPROBE_OK);
    assert_int_equal(v, 12080);
    assert_int_equal(cause_of(ctx, NULL), GPUPROBE_CUDA_AVAILABLE);
    assert_true(loaded("libcudart.so.12"));
    assert_false(loaded("libcudart.so.13"));
    gpuprobe_context_destroy(ctx);
    assert_false(loaded("libcudart.so.13"));
}

/* cuBLAS loaded for a matmul whose cublasCreate failed holds no state:
 * gpuprobe_context_destroy() closes it. A later matmul loads it again,
 * and once a handle exists it stays. */
static void uncreated_cublas_closed(void **state)
{
    (void)state;
    assert_false(loaded("libcublas.so.13"));
    fleet("fail = cublasCreate_v2:1=CUBLAS_STATUS_NOT_INITIALIZED\n" H200);
    make_root(1, 1);
    gpuprobe_context *ctx = probe();
    gpuprobe_matmul_options *o = mm_options(8, 8, 8, GPUPROBE_DTYPE_FP32);
    gpuprobe_matmul_result *r = NULL;
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_ERR_CUDA);
    assert_contains(gpuprobe_last_error(ctx), "cublasCreate failed: CUBLAS_STATUS_NOT_INITIALIZED");
    assert_true(loaded("libcublas.so.13"));
    gpuprobe_context_destroy(ctx);
    assert_false(loaded("libcublas.so.13"));
    ctx = probe();
    EXPECT(ctx, gpuprobe_matmul_run(ctx, 1, o, 0, &r), GPUPROBE_OK);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_context_destroy(ctx);
    assert_true(loaded("libcublas.so.13"));
    gpuprobe_matmul_options_destroy(o);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "cublas-closed") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(uncreated_cublas_closed, teardown)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "failed-init") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(failed_init_keeps_driver, teardown)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "runtime12-only") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(too_new_runtime_closed, teardown)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "no-driver") == 0) {
        void *real = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (real) {
            Dl_info info;
            memset(&info, 0, sizeof info);
            void *sym = dlsym(real, "cuInit");
            if (sym)
                dladdr(sym, &info);
            printf("SKIP: this machine has a CUDA driver (%s): \"no driver\" cannot be simulated here\n",
                   info.dli_fname ? info.dli_fname : "libcuda.so.1");
            return 77;
        }
        const struct CMUnitTest tests[] = {cmocka_unit_test_teardown(no_driver, teardown)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(initialised_libraries_stay_loaded, teardown),
        cmocka_unit_test_teardown(every_cause, teardown),
        cmocka_unit_test_teardown(failed_probe_leaks_nothing, teardown),
        cmocka_unit_test_teardown(runtime12_fallback_matmul, teardown),
        cmocka_unit_test_teardown(cublas_missing_named, teardown),
        cmocka_unit_test_teardown(disabled_loads_nothing, teardown),
        cmocka_unit_test_teardown(no_permission, teardown),
        cmocka_unit_test_teardown(dangling_node_not_blamed, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
