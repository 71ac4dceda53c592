/*
 * scenario_speed.c - the speed estimate of libgpuprobe (the shared library,
 * unmodified) on a simulated H200 and L4: the figures gpuprobe_speed_measure()
 * takes (the read bandwidth and the matmul at the model's three shapes)
 * against the simulation's time model, the estimate made of them, and
 * the figures kept in the context: a second measurement on the same device
 * and dtype makes no simulated call at all (the call log), another device
 * is measured on its own, and nothing stays allocated.
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

#include <math.h>

#include "scenario.h"

static const char fleet_h200_l4[] = "[gpu]\npreset = H200\n[gpu]\npreset = L4\n";

/* The time model (docs/testing.md, tests/simcuda/cublas.c): a gemm costs
 * the launch (5 us) plus its FLOP at the board's rate, 16 times it for
 * 16-bit inputs (tensor cores); cublasSdot the launch plus both vectors at
 * the memory's rate. */
#define LAUNCH_S 5e-6
static double gemm_rate(double m, double n, double k, double tflops)
{
    double flop = 2 * m * n * k;
    return flop / (LAUNCH_S + flop / (tflops * 1e12));
}

static double read_rate(double buffer, double gbps)
{
    return 2 * buffer / (LAUNCH_S + 2 * buffer / (gbps * 1e9));
}

/* |got / want - 1| < 1e-3: the simulated clocks and the events' float
 * milliseconds keep a 5 us call to within a few nanoseconds. */
static void near(double got, double want, const char *what)
{
    if (!(fabs(got / want - 1) < 1e-3))
        fail_msg("%s: %.9g, the time model gives %.9g", what, got, want);
}

/* 2 layers, hidden 256, 4 heads of 64 and 1 KV head, MLP 512,
 * vocabulary 1024, tied: 1,377,536 parameters. */
static gpuprobe_model *small_model(void)
{
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    const int64_t v[][2] = {
        {GPUPROBE_MODEL_LAYERS, 2},       {GPUPROBE_MODEL_HIDDEN, 256},
        {GPUPROBE_MODEL_HEADS, 4},        {GPUPROBE_MODEL_KV_HEADS, 1},
        {GPUPROBE_MODEL_INTERMEDIATE, 512}, {GPUPROBE_MODEL_VOCAB, 1024},
        {GPUPROBE_MODEL_TIED_EMBEDDINGS, 1},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_int_equal(gpuprobe_model_set(m, (gpuprobe_model_param)v[i][0], v[i][1]),
                         GPUPROBE_OK);
    return m;
}

static gpuprobe_speed_options *small_options(void)
{
    gpuprobe_speed_options *o = NULL;
    assert_int_equal(gpuprobe_speed_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_PROMPT, 64), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_GENERATE, 16), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_BUDGET_MS, 5), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_BUFFER_BYTES, 64 << 10),
                     GPUPROBE_OK);
    return o;
}

/* The figures of the small model at P = 64 on a board of this rate. */
static void check_figures(const gpuprobe_speed_figures *f, double tflops, double gbps)
{
    near(f->read_bytes_per_s, read_rate(64 << 10, gbps), "read bandwidth");
    /* the decode shape at 16 rows at least */
    near(f->decode_flops, gemm_rate(16, 512, 256, tflops), "decode shape 16 x 512 x 256");
    near(f->prefill_flops, gemm_rate(64, 512, 256, tflops), "MLP shape 64 x 512 x 256");
    /* q and k, v: 256 + 2 x 64 columns */
    near(f->prefill_attn_flops, gemm_rate(64, 384, 256, tflops), "attention shape 64 x 384 x 256");
    assert_int_equal(f->dtype, GPUPROBE_DTYPE_BF16);
}

static void test_speed_h200_l4(void **state)
{
    (void)state;
    fleet(fleet_h200_l4);
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_model *m = small_model();
    gpuprobe_speed_options *so = small_options();

    /* the H200 (device 1): 67 TFLOP/s (x 16 in bf16), 4800 GB/s in the model */
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 1, m, NULL, so, 0, &f), GPUPROBE_OK);
    check_figures(&f, 67.0 * 16, 4800.0);
    assert_int_equal(f.flags, 0);
    assert_true(simcuda_log_count("cublasGemmEx", 0) > 0);
    assert_int_equal(simcuda_log_count(NULL, 1), 0); /* the L4 untouched */

    /* the estimate from them: decode reads the 2,755,072 bytes of bf16
     * weights and 2 x 2 x 64 x 2 = 512 bytes of KV cache a token: at the
     * 26 GB/s of 64 KiB reads (launch-bound) it is memory-bound */
    gpuprobe_speed s = GPUPROBE_SPEED_INIT;
    EXPECT(ctx, gpuprobe_speed_compute(ctx, m, NULL, so, &f, 0, &s), GPUPROBE_OK);
    assert_true(s.decode_weight_bytes == 2755072.0);
    assert_true(s.decode_bytes_first == 2755072.0 + 65 * 512.0);
    double tok = 2.0 * (256 * (2 * 256 + 2 * 64) + 3 * 256 * 512) + 1024 * 256;
    double mem = (2755072.0 + 65 * 512.0) / f.read_bytes_per_s;
    double cmp = (2 * tok + 4.0 * 2 * 256 * 65) / f.decode_flops;
    near(s.decode_step_first_s, fmax(mem, cmp) + 2 * 5e-6, "first decode step");
    assert_true(mem > cmp);
    assert_int_equal(s.decode_bound, GPUPROBE_SPEED_BOUND_MEMORY);

    /* a second estimate on the same device and dtype measures nothing */
    simcuda_log_clear();
    gpuprobe_speed_figures again = GPUPROBE_SPEED_FIGURES_INIT;
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 1, m, NULL, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(simcuda_log_size(), 0);
    assert_int_equal(again.flags, GPUPROBE_SPEED_CACHED);
    assert_true(again.decode_flops == f.decode_flops && again.read_bytes_per_s == f.read_bytes_per_s);
    /* a CPU thread count is not read on a GPU: still kept, no threads said */
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_CPU_THREADS, 3), GPUPROBE_OK);
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 1, m, NULL, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(simcuda_log_size(), 0);
    assert_int_equal(again.flags, GPUPROBE_SPEED_CACHED);
    assert_int_equal(again.cpu_threads, 0);
    assert_int_equal(f.cpu_threads, 0);
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_CPU_THREADS, 0), GPUPROBE_OK);

    /* fp16 weights: another dtype, the matmuls again (not the bandwidth) */
    gpuprobe_plan_options *po = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP16),
                     GPUPROBE_OK);
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 1, m, po, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(again.dtype, GPUPROBE_DTYPE_FP16);
    assert_true(simcuda_log_count("cublasGemmEx", 0) > 0);
    assert_int_equal(simcuda_log_count("cublasSdot_v2", SIMCUDA_ANY), 0);

    /* the L4 (device 2): 30.3 TFLOP/s (x 16), 300 GB/s, measured on its own */
    simcuda_log_clear();
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 2, m, NULL, so, 0, &f), GPUPROBE_OK);
    check_figures(&f, 30.3 * 16, 300.0);
    assert_int_equal(simcuda_log_count(NULL, 0), 0); /* the H200 untouched */
    assert_true(simcuda_log_count("cublasSdot_v2", 1) > 0);

    /* int4 weights: timed in bf16, and said so */
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_INT4),
                     GPUPROBE_OK);
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 2, m, po, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(again.flags, GPUPROBE_SPEED_CACHED | GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    /* fp64 weights: not timed on a GPU */
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP64),
                     GPUPROBE_OK);
    EXPECT(ctx, gpuprobe_speed_measure(ctx, 2, m, po, so, 0, &again), GPUPROBE_ERR_UNSUPPORTED);

    gpuprobe_plan_options_destroy(po);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
    gpuprobe_context_destroy(ctx);
    for (int unit = 0; unit < 2; unit++) /* nothing left on either GPU */
        assert_int_equal(unit_state(unit).allocations, 0);
    assert_only_simulated_cuda();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speed_h200_l4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
