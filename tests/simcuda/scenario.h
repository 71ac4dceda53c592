/*
 * scenario.h - helpers of the scenario tests: libgpuprobe, unmodified,
 * against the simulated NVIDIA stack (see simcuda.h). Include after
 * <cmocka.h>. SIMCUDA_DIR (the build's simcuda/ directory) is defined by
 * the build.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef SIMCUDA_SCENARIO_H
#define SIMCUDA_SCENARIO_H

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprobe.h"
#include "simcuda.h"

#ifndef SIMCUDA_DIR
#error "SIMCUDA_DIR must name the build's simcuda directory"
#endif

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* Replace the simulated fleet (see docs/testing.md for the language). */
static inline void fleet(const char *text)
{
    if (simcuda_configure(text) != 0)
        fail_msg("simcuda refused the fleet: %s", simcuda_error());
}

static inline gpuprobe_context *new_ctx(void)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    return ctx;
}

/* A call's status must be `want`; a failure's message must say something
 * and must not repeat the status text (callers print
 * "<status string>: <message>"). */
static inline void check_status(gpuprobe_context *ctx, gpuprobe_status got,
                                gpuprobe_status want, const char *what)
{
    const char *msg = gpuprobe_last_error(ctx);
    if (got != want)
        fail_msg("%s: %s (%s), want %s", what, gpuprobe_status_name(got), msg,
                 gpuprobe_status_name(want));
    if (want != GPUPROBE_OK) {
        if (!msg[0])
            fail_msg("%s: %s without a message", what, gpuprobe_status_name(got));
        if (strstr(msg, gpuprobe_status_string(want)))
            fail_msg("%s: the message repeats the status text \"%s\": %s", what,
                     gpuprobe_status_string(want), msg);
    }
}
#define EXPECT(ctx, call, want) check_status((ctx), (call), (want), #call)

static inline void assert_contains(const char *text, const char *part)
{
    if (!text || !strstr(text, part))
        fail_msg("\"%s\" does not contain \"%s\"", text ? text : "(null)", part);
}

static inline gpuprobe_cuda_cause cause_of(gpuprobe_context *ctx, const char **detail)
{
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)-1;
    const char *d = NULL;
    EXPECT(ctx, gpuprobe_cuda_status(ctx, &cause, &d), GPUPROBE_OK);
    if (detail)
        *detail = d;
    return cause;
}

static inline simcuda_unit_state unit_state(int unit)
{
    simcuda_unit_state st;
    if (simcuda_unit(unit, &st) != 0)
        fail_msg("%s", simcuda_error());
    return st;
}

/* Every CUDA library in the process comes from the simulation: a real one
 * found instead (a machine with a GPU) would make the scenario meaningless. */
static int check_one_object(struct dl_phdr_info *info, size_t size, void *bad)
{
    (void)size;
    static const char *const names[] = {"libcuda.so", "libcudart.so", "libcublas.so",
                                        "libnvidia-ml.so"};
    const char *path = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strncmp(base, names[i], strlen(names[i])) == 0 &&
            strncmp(path, SIMCUDA_DIR "/", strlen(SIMCUDA_DIR) + 1) != 0)
            snprintf((char *)bad, 512, "%s", path);
    return 0;
}

static inline void assert_only_simulated_cuda(void)
{
    char bad[512] = "";
    dl_iterate_phdr(check_one_object, bad);
    if (bad[0])
        fail_msg("a CUDA library outside the simulation was loaded: %s", bad);
}

/* A function of a (simulated) CUDA library, as an application reaches it;
 * the library is found as the application would find it. */
static inline void *cuda_function(const char *soname, const char *name)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail_msg("cannot open %s: %s", soname, dlerror());
    void *f = dlsym(lib, name);
    if (!f)
        fail_msg("%s has no %s", soname, name);
    return f;
}
#define CUDA_FN(type, soname, name) ((type)(uintptr_t)cuda_function((soname), (name)))

/* A matmul's options: small, quick, all checks on. */
static inline gpuprobe_matmul_options *mm_options(int64_t m, int64_t n, int64_t k,
                                                  gpuprobe_dtype dtype)
{
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, m), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, n), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_K, k), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dtype), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 2), GPUPROBE_OK);
    /* One call a run and no search for the steady state (its windows
     * last 50 ms, thousands of these calls): these scenarios are about
     * the calls, not the timing (autorange_on_a_gpu and
     * steady_state_on_a_gpu are about that). */
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS, 0), GPUPROBE_OK);
    return o;
}

#endif
