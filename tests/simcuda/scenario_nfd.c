/*
 * scenario_nfd.c - what gpuprobe-nfd's queries (nfd_gather(), the one
 * place the command asks the library anything) do to the GPUs of a
 * simulated node, read from the simulation's state and call log: the
 * default run creates no CUDA context, allocates nothing and runs nothing
 * on any GPU; --bench works on the first GPU of the labelled product only
 * and leaves nothing allocated once the gpuprobe context is destroyed.
 *
 * The library is the shared one, unmodified; the labels of these fleets,
 * whole-command, are the tools.nfd.labels_sim_* tests.
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
#include <stdlib.h>

#include <cmocka.h>

#include "nfd.h"
#include "scenario.h"

/* Units 0-3 in CUDA order; the H200 is the most common product, and its
 * first GPU is unit 1 (the library's device 2, cuda:1). */
static const char node[] = "[gpu]\npreset = A100-80GB\n"
                           "[gpu]\npreset = H200\n"
                           "[gpu]\npreset = L4\n"
                           "[gpu]\npreset = H200\n";
#define UNITS 4
#define LABELLED 1

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    return 0;
}

static void no_failure(void *arg, gpuprobe_context *ctx, gpuprobe_status st, const char *what)
{
    (void)arg;
    fail_msg("%s: %s: %s", what, gpuprobe_status_name(st), gpuprobe_last_error(ctx));
}

static const char *label(const nfd_label *l, size_t n, const char *name)
{
    char key[LABEL_KEY_MAX + 1];
    snprintf(key, sizeof key, NFD_DEFAULT_PREFIX "/%s", name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].key, key) == 0)
            return l[i].value;
    fail_msg("no label %s", key);
    return NULL;
}

/* Nothing of this process on the unit: no context, memory, work. */
static void untouched(int unit)
{
    simcuda_unit_state st = unit_state(unit);
    if (st.context_active || st.context_refs || st.allocations || st.allocated_bytes ||
        st.streams || st.events || st.blas_handles || st.pending_ops)
        fail_msg("unit %d: context %d (%u refs), %zu allocations (%llu bytes), %zu streams, "
                 "%zu events, %zu cuBLAS handles, %zu queued", unit, st.context_active,
                 st.context_refs, st.allocations, (unsigned long long)st.allocated_bytes,
                 st.streams, st.events, st.blas_handles, st.pending_ops);
}

/* The calls that create a context, allocate or run work (any of them on a
 * GPU would show in the call log). */
static const char *const working[] = {
    "cuDevicePrimaryCtxRetain", "cuCtxPushCurrent_v2", "cuCtxSetCurrent", "cuMemGetInfo_v2",
    "cudaSetDevice", "cudaMemGetInfo", "cudaMalloc", "cudaMallocHost", "cudaStreamCreate",
    "cudaStreamCreateWithFlags", "cudaEventCreate", "cublasCreate_v2", "cublasGemmEx",
};

/* The labels every run writes: answered from enumeration alone, without a
 * context anywhere, and nothing allocated or run on any GPU. */
static void default_run_creates_no_context(void **state)
{
    (void)state;
    fleet(node);
    simcuda_log_clear();
    gpuprobe_context *ctx = new_ctx();
    nfd_facts f;
    EXPECT(ctx, nfd_gather(ctx, NULL, &f, no_failure, NULL), GPUPROBE_OK);
    assert_only_simulated_cuda();
    nfd_label l[NFD_MAX_LABELS];
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE | NFD_MEASURED, l);
    assert_string_equal(label(l, n, "gpu.product"), "NVIDIA-H200");
    assert_string_equal(label(l, n, "gpu.count"), "2");
    assert_string_equal(label(l, n, "gpu.memory"), "143771"); /* total, in MiB */
    assert_string_equal(label(l, n, "cuda.devices"), "4");
    nfd_facts_free(&f);

    size_t calls = simcuda_log_size();
    assert_true(calls > 0); /* the simulation answered */
    for (size_t i = 0; i < calls; i++) {
        simcuda_call c;
        assert_int_equal(simcuda_log_entry(i, &c), 0);
        if (c.gpu != SIMCUDA_NONE || c.gpu_after != SIMCUDA_NONE)
            fail_msg("%s ran with a context of unit %d current", c.func,
                     c.gpu != SIMCUDA_NONE ? c.gpu : c.gpu_after);
    }
    for (size_t i = 0; i < sizeof working / sizeof working[0]; i++)
        if (simcuda_log_count(working[i], SIMCUDA_ANY) != 0)
            fail_msg("the default run called %s", working[i]);
    for (int u = 0; u < UNITS; u++)
        untouched(u);
    gpuprobe_context_destroy(ctx);
    for (int u = 0; u < UNITS; u++)
        untouched(u);
}

/* --bench: the fit's memory query and the four matmuls run on the first
 * GPU of the labelled product; no call ever runs in a context of another
 * GPU, and none gets a context or memory. Destroying the gpuprobe context
 * frees everything the run allocated (the primary context stays, held by
 * the CUDA runtime until the process exits, as gpuprobe.h documents). */
static void bench_touches_only_the_labelled_gpu(void **state)
{
    (void)state;
    fleet(node);
    simcuda_log_clear();
    gpuprobe_context *ctx = new_ctx();
    nfd_options opt = {1, 32};
    nfd_facts f;
    EXPECT(ctx, nfd_gather(ctx, &opt, &f, no_failure, NULL), GPUPROBE_OK);
    assert_only_simulated_cuda();
    size_t count = 0, models = 0;
    size_t p = nfd_product(&f, &count, &models);
    assert_int_equal(p, 1);
    assert_int_equal(f.gpus[p].device, 2);
    static const gpuprobe_dtype dts[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_TF32,
                                         GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        assert_true(f.gpu_gflops[dts[i]] > 0); /* measured and verified */
    assert_true(f.have_fit);
    nfd_facts_free(&f);

    assert_true(simcuda_log_count("cublasGemmEx", LABELLED) >= 4);
    for (int u = 0; u < UNITS; u++) {
        if (u == LABELLED)
            continue;
        if (simcuda_log_count(NULL, u) != 0)
            fail_msg("%zu calls ran in a context of unit %d", simcuda_log_count(NULL, u), u);
        untouched(u);
    }
    gpuprobe_context_destroy(ctx);
    simcuda_unit_state st = unit_state(LABELLED);
    assert_int_equal(st.allocations + st.streams + st.events + st.blas_handles + st.pending_ops, 0);
    assert_int_equal(st.allocated_bytes, 0);
    assert_int_equal(simcuda_pinned_count(), 0);
    for (int u = 0; u < UNITS; u++)
        if (u != LABELLED)
            untouched(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(default_run_creates_no_context, setup),
        cmocka_unit_test_setup(bench_touches_only_the_labelled_gpu, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
