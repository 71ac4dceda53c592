/*
 * test_plan.c - capacity plans: parameter counts of real architectures
 * against their published figures, the KV cache, GQA vs MHA, mixtures of
 * experts, quantisation scales, training, tensor parallelism, exact 64-bit
 * limits, the largest context and batch, and plans against simulated
 * devices (the gp_test_set_cuda() seam and a simulated /proc for the CPU).
 *
 * The worked figures are computed by hand from the formulas documented in
 * gpuprobe.h and docs/capacity.md (the arithmetic is in the comments).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "sysroot_util.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

/* ---- helpers ---- */

typedef struct arch {
    int64_t layers, hidden, heads, kv_heads, inter, vocab, tied, experts,
        per_token, window, bias;
} arch;

/* Published shapes (the models' config.json). */
static const arch llama31_8b = {32, 4096, 32, 8, 14336, 128256, 0, 0, 0, 0, 0};
static const arch llama31_70b = {80, 8192, 64, 8, 28672, 128256, 0, 0, 0, 0, 0};
static const arch mistral_7b_v03 = {32, 4096, 32, 8, 14336, 32768, 0, 0, 0, 0, 0};
static const arch qwen25_7b = {28, 3584, 28, 4, 18944, 152064, 0, 0, 0, 0, 1};
static const arch qwen25_05b = {24, 896, 14, 2, 4864, 151936, 1, 0, 0, 0, 1};
static const arch mixtral_8x7b = {32, 4096, 32, 8, 14336, 32000, 0, 8, 2, 0, 0};

static gpuprobe_model *model_of(const arch *a)
{
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    const int64_t v[] = {a->layers, a->hidden, a->heads, a->kv_heads, 0,
                         a->inter, a->vocab, a->tied, a->experts,
                         a->per_token, a->window, a->bias};
    for (int p = GPUPROBE_MODEL_LAYERS; p <= GPUPROBE_MODEL_QKV_BIAS; p++)
        assert_int_equal(gpuprobe_model_set(m, (gpuprobe_model_param)p, v[p - 1]),
                         GPUPROBE_OK);
    return m;
}

static gpuprobe_plan_options *opts_new(void)
{
    gpuprobe_plan_options *o = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&o), GPUPROBE_OK);
    return o;
}

static void set(gpuprobe_plan_options *o, gpuprobe_plan_param p, int64_t v)
{
    assert_int_equal(gpuprobe_plan_options_set(o, p, v), GPUPROBE_OK);
}

/* The plan, which must succeed. */
static gpuprobe_plan plan_of(const gpuprobe_model *m, const gpuprobe_plan_options *o)
{
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    gpuprobe_status st = gpuprobe_plan_compute(NULL, m, o, 0, &p);
    if (st != GPUPROBE_OK)
        fail_msg("plan: %s", gpuprobe_status_name(st));
    return p;
}

/* The plan must fail with st, and its message must contain `part`. */
static void plan_fails(const gpuprobe_model *m, const gpuprobe_plan_options *o,
                       gpuprobe_status st, const char *part)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    p.weights_bytes = 12345;
    assert_int_equal(gpuprobe_plan_compute(ctx, m, o, 0, &p), st);
    assert_true(p.weights_bytes == 12345); /* nothing written */
    if (!strstr(gpuprobe_last_error(ctx), part))
        fail_msg("message \"%s\" lacks \"%s\"", gpuprobe_last_error(ctx), part);
    /* the same without a context: same status, no message anywhere */
    assert_int_equal(gpuprobe_plan_compute(NULL, m, o, 0, &p), st);
    gpuprobe_context_destroy(ctx);
}

/* |count / published - 1| < 0.5% */
static void near_published(uint64_t count, double published)
{
    double r = (double)count / published;
    if (r < 0.995 || r > 1.005)
        fail_msg("%llu parameters vs %.4g published: ratio %.5f",
                 (unsigned long long)count, published, r);
}

/* ---- parameter counts ---- */

static void test_param_counts(void **state)
{
    (void)state;
    static const struct {
        const arch *a;
        uint64_t exact;   /* from the formula, by hand */
        double published; /* the model card / safetensors total */
    } rows[] = {
        /* 32 x (2*4096*(4096+1024) + 3*4096*14336 + 2*4096)
         * + 2 * 128256*4096 + 4096 */
        {&llama31_8b, UINT64_C(8030261248), 8.03e9},
        {&llama31_70b, UINT64_C(70553706496), 70.6e9},
        {&mistral_7b_v03, UINT64_C(7248023552), 7.25e9},
        /* with the q, k, v biases: 7,615,616,512, Qwen's own figure */
        {&qwen25_7b, UINT64_C(7615616512), 7.61e9},
        /* tied: 494,032,768 ("494M", the safetensors total) */
        {&qwen25_05b, UINT64_C(494032768), 0.494e9},
        {&mixtral_8x7b, UINT64_C(46702792704), 46.7e9},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gpuprobe_model *m = model_of(rows[i].a);
        gpuprobe_plan p = plan_of(m, NULL);
        if (p.params != rows[i].exact)
            fail_msg("row %zu: %llu parameters, want %llu", i,
                     (unsigned long long)p.params,
                     (unsigned long long)rows[i].exact);
        near_published(p.params, rows[i].published);
        if (!rows[i].a->experts)
            assert_true(p.active_params == p.params);
        gpuprobe_model_destroy(m);
    }
}

/* ---- KV cache ---- */

static void test_kv_llama31_8b(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_KV_DTYPE, GPUPROBE_DTYPE_FP16);
    set(o, GPUPROBE_PLAN_CONTEXT, 131072);
    gpuprobe_plan p = plan_of(m, o);
    /* 2 x 32 layers x 8 KV heads x 128 x 2 bytes */
    assert_true(p.kv_bytes_per_token == 131072);
    /* 128k tokens: 16 GiB next to 16 GB of weights */
    assert_true(p.kv_cache_bytes == 16 * GiB);
    assert_true(p.weights_bytes == UINT64_C(16060522496));
    assert_int_equal(p.flags, 0);
    /* batch 4: four times; fp8 KV: half; fp32 KV: double */
    set(o, GPUPROBE_PLAN_BATCH, 4);
    assert_true(plan_of(m, o).kv_cache_bytes == 64 * GiB);
    set(o, GPUPROBE_PLAN_KV_DTYPE, GPUPROBE_DTYPE_FP8);
    assert_true(plan_of(m, o).kv_bytes_per_token == 65536);
    set(o, GPUPROBE_PLAN_KV_DTYPE, GPUPROBE_DTYPE_FP32);
    assert_true(plan_of(m, o).kv_bytes_per_token == 262144);
    /* default (-1): the compute dtype, bf16 for bf16 and int4 weights,
     * fp32 for fp32 weights */
    set(o, GPUPROBE_PLAN_KV_DTYPE, -1);
    assert_true(plan_of(m, o).kv_bytes_per_token == 131072);
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_INT4);
    assert_true(plan_of(m, o).kv_bytes_per_token == 131072);
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP32);
    assert_true(plan_of(m, o).kv_bytes_per_token == 262144);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

static void test_gqa_vs_mha(void **state)
{
    (void)state;
    arch mha = llama31_8b;
    mha.kv_heads = 32;
    arch mqa = llama31_8b;
    mqa.kv_heads = 1;
    gpuprobe_model *g = model_of(&llama31_8b), *a = model_of(&mha),
                   *q = model_of(&mqa);
    gpuprobe_plan pg = plan_of(g, NULL), pa = plan_of(a, NULL), pq = plan_of(q, NULL);
    /* KV heads not given at all: MHA, the same as 32 */
    gpuprobe_model *d = model_of(&mha);
    assert_int_equal(gpuprobe_model_set(d, GPUPROBE_MODEL_KV_HEADS, 0), GPUPROBE_OK);
    int64_t kv = 0;
    assert_int_equal(gpuprobe_model_get(d, GPUPROBE_MODEL_KV_HEADS, &kv), GPUPROBE_OK);
    assert_int_equal(kv, 32);
    assert_true(plan_of(d, NULL).params == pa.params);

    /* 4x the KV cache, and k, v projections 4096 x 4096 instead of
     * 4096 x 1024: 2 x 4096 x 3072 x 32 = 805,306,368 more parameters */
    assert_true(pa.kv_bytes_per_token == 4 * pg.kv_bytes_per_token);
    assert_true(pa.kv_cache_bytes == 4 * pg.kv_cache_bytes);
    assert_true(pa.params - pg.params == UINT64_C(805306368));
    /* MQA: one head, an eighth of GQA's cache */
    assert_true(pq.kv_bytes_per_token == 16384);
    assert_true(pq.kv_bytes_per_token * 8 == pg.kv_bytes_per_token);
    gpuprobe_model_destroy(g);
    gpuprobe_model_destroy(a);
    gpuprobe_model_destroy(q);
    gpuprobe_model_destroy(d);
}

/* ---- mixture of experts ---- */

static void test_moe_total_vs_active(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&mixtral_8x7b);
    gpuprobe_plan p = plan_of(m, NULL);
    /* 46.7 B stored, 12.9 B used per token (2 of 8 experts) */
    assert_true(p.params == UINT64_C(46702792704));
    assert_true(p.active_params == UINT64_C(12879925248));
    near_published(p.active_params, 12.9e9);
    /* the difference is exactly 6 experts of 3 x 4096 x 14336 per layer */
    assert_true(p.params - p.active_params ==
                UINT64_C(32) * 6 * 3 * 4096 * 14336);
    /* the weights hold every expert */
    assert_true(p.weights_bytes == 2 * p.params);
    /* the KV cache is the dense model's (Mistral 7B's shape) */
    gpuprobe_model *dense = model_of(&mistral_7b_v03);
    assert_true(plan_of(dense, NULL).kv_bytes_per_token == p.kv_bytes_per_token);
    /* activations follow 2 routed experts: 3 x 2 x 14336 wide */
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_CONTEXT, 1000);
    gpuprobe_plan pm = plan_of(m, o);
    /* 2 bytes x 1000 tokens x (2 x 4096 + 86016) + 32000 x 4 */
    assert_true(pm.activation_bytes == UINT64_C(2000) * (8192 + 86016) + 128000);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(dense);
    gpuprobe_model_destroy(m);
}

/* The smallest mixture, 2 experts, stores both experts' MLPs and a router
 * of 2 x hidden per layer; with both routed every parameter is active, with
 * one routed only one MLP. A single expert with none per token named is the
 * dense model, every parameter active. */
static void test_moe_two_experts_and_one(void **state)
{
    (void)state;
    const uint64_t dense = UINT64_C(8030261248);          /* Llama 3.1 8B */
    const uint64_t mlp = UINT64_C(32) * 3 * 4096 * 14336; /* one expert, every layer */
    const uint64_t router = UINT64_C(32) * 2 * 4096;
    arch a = llama31_8b;
    a.experts = 2;
    a.per_token = 2;
    gpuprobe_model *m = model_of(&a);
    gpuprobe_plan p = plan_of(m, NULL);
    assert_true(p.params == dense + mlp + router);
    assert_true(p.active_params == p.params);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 1), GPUPROBE_OK);
    p = plan_of(m, NULL);
    assert_true(p.params == dense + mlp + router);
    assert_true(p.active_params == dense + router);
    gpuprobe_model_destroy(m);

    a.experts = 1;
    a.per_token = 0;
    m = model_of(&a);
    p = plan_of(m, NULL);
    assert_true(p.params == dense);
    assert_true(p.active_params == dense);
    gpuprobe_model_destroy(m);
}

/* ---- quantisation ---- */

static void test_int4_scales(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_INT4);
    /* matrices 32 x (41,943,040 + 176,160,768) = 6,979,321,856 weights:
     * 3,489,660,928 bytes of int4 + 6,979,321,856 / 128 fp16 scales
     * (109,051,904 bytes); embedding, head and norms 1,050,939,392
     * parameters stay bf16 (2,101,878,784 bytes) */
    gpuprobe_plan p = plan_of(m, o);
    assert_true(p.weights_bytes == UINT64_C(3489660928) + UINT64_C(109051904) +
                                       UINT64_C(2101878784));
    /* the scales: 1/64 of the int4 bytes, 0.125 bits per weight */
    set(o, GPUPROBE_PLAN_QUANT_GROUP, 0);
    uint64_t bare = plan_of(m, o).weights_bytes;
    assert_true(p.weights_bytes - bare == UINT64_C(109051904));
    set(o, GPUPROBE_PLAN_QUANT_GROUP, 32);
    assert_true(plan_of(m, o).weights_bytes - bare == 4 * UINT64_C(109051904));
    /* a group that does not divide rounds the last group up */
    set(o, GPUPROBE_PLAN_QUANT_GROUP, 1000000007);
    assert_true(plan_of(m, o).weights_bytes - bare == 2 * 7);
    /* int8 and fp8: 1 byte per weight plus the same scales */
    set(o, GPUPROBE_PLAN_QUANT_GROUP, 128);
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_INT8);
    assert_true(plan_of(m, o).weights_bytes == UINT64_C(6979321856) +
                                                   UINT64_C(109051904) +
                                                   UINT64_C(2101878784));
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP8);
    assert_true(plan_of(m, o).weights_bytes == UINT64_C(6979321856) +
                                                   UINT64_C(109051904) +
                                                   UINT64_C(2101878784));
    /* the scales do not apply to 16-bit weights */
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP16);
    assert_true(plan_of(m, o).weights_bytes == 2 * UINT64_C(8030261248));
    /* a parameter count alone is quantised whole: 7e9 int4 = 3.5e9 bytes
     * + 7e9 / 128 scales (54,687,500 groups, 109,375,000 bytes) */
    gpuprobe_model *n = NULL;
    assert_int_equal(gpuprobe_model_create(&n), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(n, GPUPROBE_MODEL_PARAMS, 7000000000), GPUPROBE_OK);
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_INT4);
    assert_true(plan_of(n, o).weights_bytes == UINT64_C(3500000000) + UINT64_C(109375000));
    gpuprobe_model_destroy(n);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- inference activations, chunked prefill, sliding window ---- */

static void test_inference_breakdown(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan p = plan_of(m, NULL); /* bf16, context 4096, batch 1 */
    /* 2 bytes x 4096 tokens x (2 x 4096 + max(4 x 4096 + 2 x 1024,
     * 3 x 14336)) + 128256 x 4 */
    assert_true(p.activation_bytes == UINT64_C(419430400) + UINT64_C(513024));
    assert_true(p.kv_cache_bytes == UINT64_C(536870912));
    assert_true(p.overhead_bytes == GPUPROBE_DEFAULT_CONTEXT_RESERVE);
    assert_int_equal(p.overhead_source, GPUPROBE_RESERVE_DEFAULT);
    assert_true(p.margin_bytes == GiB);
    assert_true(p.gradient_bytes == 0 && p.optimizer_bytes == 0);
    assert_true(p.total_bytes == UINT64_C(18627949568));
    assert_true(p.total_bytes == p.weights_bytes + p.kv_cache_bytes +
                                     p.activation_bytes + p.overhead_bytes +
                                     p.margin_bytes);
    /* pure: no device figures */
    assert_true(p.available_bytes == 0 && p.largest_context == 0 &&
                p.largest_batch == 0 && p.fits == 0);

    /* prefill in chunks of 512: an eighth of the token activations */
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_PREFILL_CHUNK, 512);
    assert_true(plan_of(m, o).activation_bytes == UINT64_C(419430400) / 8 + 513024);
    /* a chunk longer than the context is the context */
    set(o, GPUPROBE_PLAN_PREFILL_CHUNK, 100000);
    assert_true(plan_of(m, o).activation_bytes == p.activation_bytes);
    /* fp32 and fp64 weights compute in their own dtype (4 and 8 bytes a
     * value, the KV cache too); the logits stay fp32 */
    gpuprobe_plan_options *wide = opts_new();
    set(wide, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP32);
    gpuprobe_plan f32 = plan_of(m, wide);
    assert_true(f32.activation_bytes == 2 * UINT64_C(419430400) + UINT64_C(513024));
    assert_true(f32.kv_cache_bytes == 2 * UINT64_C(536870912));
    set(wide, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP64);
    gpuprobe_plan f64 = plan_of(m, wide);
    assert_true(f64.activation_bytes == 4 * UINT64_C(419430400) + UINT64_C(513024));
    assert_true(f64.kv_cache_bytes == 4 * UINT64_C(536870912));
    gpuprobe_plan_options_destroy(wide);
    /* weights only: no KV cache, no activations */
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_WEIGHTS);
    gpuprobe_plan w = plan_of(m, o);
    assert_true(w.kv_cache_bytes == 0 && w.activation_bytes == 0);
    assert_true(w.weights_bytes == p.weights_bytes);
    /* the overhead and the margin set by hand */
    set(o, GPUPROBE_PLAN_OVERHEAD, 0);
    set(o, GPUPROBE_PLAN_MARGIN, 0);
    w = plan_of(m, o);
    assert_true(w.total_bytes == w.weights_bytes);
    assert_int_equal(w.overhead_source, GPUPROBE_RESERVE_NONE);
    gpuprobe_plan_options_destroy(o);

    /* a sliding window of 4096 caps the cache of a 32k context */
    arch win = mistral_7b_v03;
    win.window = 4096;
    gpuprobe_model *mw = model_of(&win), *mf = model_of(&mistral_7b_v03);
    o = opts_new();
    set(o, GPUPROBE_PLAN_CONTEXT, 32768);
    gpuprobe_plan pw = plan_of(mw, o), pf = plan_of(mf, o);
    assert_true(pw.kv_cache_bytes == 4096 * pw.kv_bytes_per_token);
    assert_true(pf.kv_cache_bytes == 32768 * pf.kv_bytes_per_token);
    assert_true(pw.flags & GPUPROBE_PLAN_WINDOWED);
    assert_int_equal(pf.flags & GPUPROBE_PLAN_WINDOWED, 0);
    assert_true(pw.params == pf.params);
    set(o, GPUPROBE_PLAN_CONTEXT, 4096); /* not beyond the window: no cap */
    assert_int_equal(plan_of(mw, o).flags & GPUPROBE_PLAN_WINDOWED, 0);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(mw);
    gpuprobe_model_destroy(mf);
    gpuprobe_model_destroy(m);
}

/* ---- training ---- */

static void test_training(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_TRAINING);
    gpuprobe_plan p = plan_of(m, o);
    /* 16 bytes per parameter: 2 + 2 + 12 */
    assert_true(p.weights_bytes == UINT64_C(16060522496));
    assert_true(p.gradient_bytes == UINT64_C(16060522496));
    assert_true(p.optimizer_bytes == 12 * UINT64_C(8030261248));
    assert_true(p.kv_cache_bytes == 0);
    /* per layer 2 x 4096 tokens x 17 x 4096 = 34 s b h = 570,425,344;
     * 32 layers; logits 4096 x 128256 x (2 + 4) = 3,152,019,456 */
    assert_true(p.activation_bytes == 32 * UINT64_C(570425344) + UINT64_C(3152019456));
    assert_true(p.activation_bytes == UINT64_C(21405630464));
    /* checkpointing: 32 layer inputs (2 x 4096 x 4096 each) + one layer
     * recomputed + the logits */
    set(o, GPUPROBE_PLAN_CHECKPOINTING, 1);
    gpuprobe_plan c = plan_of(m, o);
    assert_true(c.activation_bytes == 32 * UINT64_C(33554432) + UINT64_C(570425344) +
                                          UINT64_C(3152019456));
    assert_true(c.total_bytes < p.total_bytes);
    /* the model states agree with the 1.0 rule */
    uint64_t rule = 0;
    assert_int_equal(gpuprobe_capacity_bytes(UINT64_C(8030261248), GPUPROBE_DTYPE_BF16,
                                             GPUPROBE_WORKLOAD_TRAINING, &rule),
                     GPUPROBE_OK);
    assert_true(c.weights_bytes + c.gradient_bytes + c.optimizer_bytes == rule);
    /* fp32: 4 + 4 + 8, activations in 4 bytes */
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP32);
    gpuprobe_plan f = plan_of(m, o);
    assert_true(f.weights_bytes == 4 * UINT64_C(8030261248));
    assert_true(f.optimizer_bytes == 8 * UINT64_C(8030261248));
    /* no training rule for quantised or tf32 weights */
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_INT4);
    plan_fails(m, o, GPUPROBE_ERR_UNSUPPORTED, "no training rule for int4");
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_TF32);
    plan_fails(m, o, GPUPROBE_ERR_UNSUPPORTED, "tf32");
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- a model given by its parameter count ---- */

static void test_by_params(void **state)
{
    (void)state;
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, 7000000000), GPUPROBE_OK);
    gpuprobe_plan p = plan_of(m, NULL);
    assert_true(p.params == 7000000000u && p.active_params == 7000000000u);
    assert_true(p.weights_bytes == 14000000000u);
    /* the 1.0 inference rule: weights x 1.2 */
    assert_true(p.activation_bytes == 2800000000u);
    uint64_t rule = 0;
    gpuprobe_capacity_bytes(7000000000u, GPUPROBE_DTYPE_BF16, GPUPROBE_WORKLOAD_INFERENCE, &rule);
    assert_true(p.weights_bytes + p.activation_bytes == rule);
    assert_true(p.kv_cache_bytes == 0 && p.kv_bytes_per_token == 0);
    assert_true(p.flags & GPUPROBE_PLAN_BY_PARAMS);
    /* growth with the context is unknown */
    uint64_t largest = 99;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_largest(ctx, m, NULL, GPUPROBE_PLAN_CONTEXT,
                                           UINT64_MAX, &largest),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_true(largest == 99);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "architecture"));
    gpuprobe_context_destroy(ctx);
    /* training: the 16 bytes, no activations */
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_TRAINING);
    p = plan_of(m, o);
    assert_true(p.weights_bytes + p.gradient_bytes + p.optimizer_bytes == 112000000000u);
    assert_true(p.activation_bytes == 0);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- tensor parallelism ---- */

static void test_tensor_parallel(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_GPUS, 2);
    gpuprobe_plan p = plan_of(m, o);
    /* per GPU: 16 heads, 4 KV heads, 7168 intermediate, 64128 vocabulary;
     * 32 x (2 x 4096 x 2560 + 3 x 4096 x 7168) + 32 x 8192
     * + 2 x 64128 x 4096 + 4096 = 4,015,263,744 parameters */
    assert_true(p.weights_bytes == 2 * UINT64_C(4015263744));
    assert_true(p.params == UINT64_C(8030261248)); /* the whole model */
    assert_true(p.kv_bytes_per_token == 65536);
    assert_true(p.kv_cache_bytes == 4096 * UINT64_C(65536));
    /* the overhead and the margin are whole on each GPU */
    assert_true(p.overhead_bytes == GPUPROBE_DEFAULT_CONTEXT_RESERVE);
    assert_true(p.margin_bytes == GiB);
    assert_true(p.total_bytes == UINT64_C(10153101824));
    /* 16 GPUs: 2 heads each, the 8 KV heads replicated (1 per GPU) */
    set(o, GPUPROBE_PLAN_GPUS, 16);
    assert_true(plan_of(m, o).kv_bytes_per_token == 32 * 128 * 2 * 2);
    /* 3 GPUs do not divide 32 heads; 64 GPUs are more than the heads */
    set(o, GPUPROBE_PLAN_GPUS, 3);
    plan_fails(m, o, GPUPROBE_ERR_INVALID_ARGUMENT,
               "32 attention heads cannot be split over 3 GPUs");
    set(o, GPUPROBE_PLAN_GPUS, 64);
    plan_fails(m, o, GPUPROBE_ERR_INVALID_ARGUMENT, "over 64 GPUs");
    /* 12 KV heads over 8 GPUs: neither split nor replicated */
    arch odd = llama31_8b;
    odd.heads = 48;
    odd.kv_heads = 12;
    odd.hidden = 6144;
    gpuprobe_model *mo = model_of(&odd);
    set(o, GPUPROBE_PLAN_GPUS, 8);
    plan_fails(mo, o, GPUPROBE_ERR_INVALID_ARGUMENT, "12 KV heads");
    gpuprobe_model_destroy(mo);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- bad models and options ---- */

static void test_model_errors(void **state)
{
    (void)state;
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "empty");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_TIED_EMBEDDINGS, 1), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT,
               "no layers, hidden size, attention heads, intermediate size, "
               "vocabulary size given");
    gpuprobe_model_destroy(m);

    m = model_of(&llama31_8b);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, 8000000000), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "both");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_VOCAB, 0), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "no vocabulary size given");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_VOCAB, 128256), GPUPROBE_OK);
    /* heads not dividing the hidden size */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_HIDDEN, 4097), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT,
               "hidden size 4097 is not a multiple of the 32 attention heads");
    int64_t hd = 7;
    assert_int_equal(gpuprobe_model_get(m, GPUPROBE_MODEL_HEAD_DIM, &hd), GPUPROBE_OK);
    assert_int_equal(hd, 0);
    /* ...unless the model gives its own head dimension */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_HEAD_DIM, 128), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params > 0);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_HIDDEN, 4096), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_HEAD_DIM, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_get(m, GPUPROBE_MODEL_HEAD_DIM, &hd), GPUPROBE_OK);
    assert_int_equal(hd, 128);
    /* KV heads that do not divide the heads, or exceed them */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_KV_HEADS, 6), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "6 KV heads do not divide 32");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_KV_HEADS, 64), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "64 KV heads");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_KV_HEADS, 8), GPUPROBE_OK);
    /* experts */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 8), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "no experts per token");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 9), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "only 8 experts");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 0), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT, "has no experts");
    /* every expert per token is allowed, one more is not; a single
     * "expert" is a dense model: one expert per token at most */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 8), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 8), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params > 0);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 2), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params > 0);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 3), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT,
               "3 experts per token, but only 2 experts");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 1), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 2), GPUPROBE_OK);
    plan_fails(m, NULL, GPUPROBE_ERR_INVALID_ARGUMENT,
               "2 experts per token, but the model has no experts");
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 1), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params == UINT64_C(8030261248));
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 0), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params == UINT64_C(8030261248));
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 0), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params == UINT64_C(8030261248));
    /* one expert and none per token named: dense too, no per-token count
     * needed */
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 1), GPUPROBE_OK);
    assert_true(plan_of(m, NULL).params == UINT64_C(8030261248));
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_EXPERTS, 0), GPUPROBE_OK);

    /* setters: out of bounds, negative, unknown: refused, nothing changed */
    int64_t lo = 0, hi = 0, v = 0;
    /* The bounds as shipped, every parameter (a value 0 means "not set"). */
    static const int64_t bounds[13] = {
        (int64_t)GPUPROBE_MAX_PARAMS, INT64_C(1) << 20, INT64_C(1) << 24, /* params, layers, hidden */
        INT64_C(1) << 20, INT64_C(1) << 20, INT64_C(1) << 20,  /* heads, KV heads, head dim */
        INT64_C(1) << 26, INT64_C(1) << 26, 1,                 /* intermediate, vocab, tied */
        INT64_C(1) << 16, INT64_C(1) << 16, INT64_C(1) << 32, 1, /* experts, per token, window, bias */
    };
    for (int p = 0; p < 13; p++) {
        assert_int_equal(gpuprobe_model_param_bounds((gpuprobe_model_param)p, &lo, &hi),
                         GPUPROBE_OK);
        if (lo != 1 || hi != bounds[p])
            fail_msg("model parameter %d: bounds [%lld, %lld], want [1, %lld]", p,
                     (long long)lo, (long long)hi, (long long)bounds[p]);
    }
    assert_int_equal(gpuprobe_model_param_bounds(GPUPROBE_MODEL_LAYERS, &lo, &hi), GPUPROBE_OK);
    assert_true(lo == 1 && hi == (INT64_C(1) << 20));
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_LAYERS, INT64_C(1000000000000)),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_LAYERS, hi + 1),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_LAYERS, -32),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_get(m, GPUPROBE_MODEL_LAYERS, &v), GPUPROBE_OK);
    assert_int_equal(v, 32);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_TIED_EMBEDDINGS, 2),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS,
                                        (int64_t)GPUPROBE_MAX_PARAMS + 1),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_set(m, (gpuprobe_model_param)13, 1),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_set(m, (gpuprobe_model_param)-1, 1),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_get(m, (gpuprobe_model_param)13, &v),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_param_bounds((gpuprobe_model_param)13, &lo, &hi),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_param_bounds(GPUPROBE_MODEL_LAYERS, NULL, &hi),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_set(NULL, GPUPROBE_MODEL_LAYERS, 1),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_get(m, GPUPROBE_MODEL_LAYERS, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_model_create(NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_model_destroy(NULL);
    assert_true(plan_of(m, NULL).params == UINT64_C(8030261248));

    /* plan arguments */
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_compute(ctx, NULL, NULL, 0, &p), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "model is NULL"));
    assert_int_equal(gpuprobe_plan_compute(ctx, m, NULL, 0, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_compute(ctx, m, NULL, 1, &p), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "flags"));
    p.size = offsetof(gpuprobe_plan, flags);
    assert_int_equal(gpuprobe_plan_compute(ctx, m, NULL, 0, &p), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "size"));
    assert_true(p.params == 0);
    /* a later, larger struct: nothing written past this one */
    union {
        gpuprobe_plan p;
        unsigned char raw[sizeof(gpuprobe_plan) + 32];
    } big;
    memset(&big, 0xAB, sizeof big);
    big.p.size = sizeof big;
    assert_int_equal(gpuprobe_plan_compute(ctx, m, NULL, 0, &big.p), GPUPROBE_OK);
    assert_true(big.p.params == UINT64_C(8030261248));
    for (size_t i = sizeof(gpuprobe_plan); i < sizeof big; i++)
        assert_int_equal(big.raw[i], 0xAB);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    uint64_t l = 0;
    assert_int_equal(gpuprobe_plan_largest(ctx, m, NULL, GPUPROBE_PLAN_MARGIN, GiB, &l),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_largest(ctx, m, NULL, GPUPROBE_PLAN_BATCH, GiB, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_largest(ctx, NULL, NULL, GPUPROBE_PLAN_BATCH, GiB, &l),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_context_destroy(ctx);
    gpuprobe_model_destroy(m);
}

static void test_options(void **state)
{
    (void)state;
    gpuprobe_plan_options *o = opts_new();
    static const int64_t defaults[] = {GPUPROBE_WORKLOAD_INFERENCE, GPUPROBE_DTYPE_BF16,
                                       -1, 4096, 1, 0, 0, 128, 1, -1, INT64_C(1) << 30};
    for (int p = 0; p <= GPUPROBE_PLAN_MARGIN; p++) {
        int64_t v = 7, lo = 0, hi = 0;
        assert_int_equal(gpuprobe_plan_options_get(o, (gpuprobe_plan_param)p, &v), GPUPROBE_OK);
        assert_true(v == defaults[p]);
        assert_int_equal(gpuprobe_plan_param_bounds((gpuprobe_plan_param)p, &lo, &hi),
                         GPUPROBE_OK);
        assert_true(lo <= v && v <= hi);
        /* the bounds are accepted, one beyond is not, and changes nothing */
        assert_int_equal(gpuprobe_plan_options_set(o, (gpuprobe_plan_param)p, lo), GPUPROBE_OK);
        assert_int_equal(gpuprobe_plan_options_set(o, (gpuprobe_plan_param)p, hi), GPUPROBE_OK);
        if (lo > INT64_MIN)
            assert_int_equal(gpuprobe_plan_options_set(o, (gpuprobe_plan_param)p, lo - 1),
                             GPUPROBE_ERR_INVALID_ARGUMENT);
        if (hi < INT64_MAX)
            assert_int_equal(gpuprobe_plan_options_set(o, (gpuprobe_plan_param)p, hi + 1),
                             GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(gpuprobe_plan_options_get(o, (gpuprobe_plan_param)p, &v), GPUPROBE_OK);
        assert_true(v == hi);
    }
    int64_t v, lo, hi;
    assert_int_equal(gpuprobe_plan_options_set(o, (gpuprobe_plan_param)11, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_options_get(o, (gpuprobe_plan_param)11, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_options_get(NULL, GPUPROBE_PLAN_BATCH, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_options_set(NULL, GPUPROBE_PLAN_BATCH, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_param_bounds((gpuprobe_plan_param)-1, &lo, &hi), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_options_create(NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    /* the dtype and workload bounds are the enums' ranges */
    assert_int_equal(gpuprobe_plan_options_set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, 8), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_options_set(o, GPUPROBE_PLAN_WORKLOAD, 3), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_options_set(o, GPUPROBE_PLAN_BATCH, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_plan_options_destroy(NULL);
}

/* A context of 0 tokens is a valid option (the weights alone, no KV cache);
 * the context's bounds are 0 and 2^32 tokens. */
static void test_context_zero(void **state)
{
    (void)state;
    int64_t lo = -7, hi = -7;
    assert_int_equal(gpuprobe_plan_param_bounds(GPUPROBE_PLAN_CONTEXT, &lo, &hi), GPUPROBE_OK);
    assert_true(lo == 0);
    assert_true(hi == INT64_C(1) << 32);
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_CONTEXT, 0);
    int64_t v = -7;
    assert_int_equal(gpuprobe_plan_options_get(o, GPUPROBE_PLAN_CONTEXT, &v), GPUPROBE_OK);
    assert_true(v == 0);
    gpuprobe_plan p = plan_of(m, o);
    assert_true(p.kv_cache_bytes == 0);
    assert_true(p.weights_bytes > 0);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- exact 64-bit arithmetic at the limits ---- */

static void test_overflow(void **state)
{
    (void)state;
    /* every dimension at its bound: the parameter count exceeds 2^64 */
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    for (int p = GPUPROBE_MODEL_LAYERS; p <= GPUPROBE_MODEL_QKV_BIAS; p++) {
        int64_t lo, hi;
        assert_int_equal(gpuprobe_model_param_bounds((gpuprobe_model_param)p, &lo, &hi), GPUPROBE_OK);
        assert_int_equal(gpuprobe_model_set(m, (gpuprobe_model_param)p, hi), GPUPROBE_OK);
    }
    plan_fails(m, NULL, GPUPROBE_ERR_OVERFLOW, "exceeds 2^64");
    gpuprobe_model_destroy(m);

    /* below 2^64 but above 10^15: 2^20 layers of 3 x 2^14 x 2^26
     * = 2^20 x 3 x 2^40 > 3 x 10^18 */
    arch big = {INT64_C(1) << 20, INT64_C(1) << 14, 1, 1, INT64_C(1) << 26, 1, 0, 0, 0, 0, 0};
    m = model_of(&big);
    plan_fails(m, NULL, GPUPROBE_ERR_OVERFLOW, "more than GPUPROBE_MAX_PARAMS");
    gpuprobe_model_destroy(m);

    /* a parameter count of exactly 10^15 (the limit) in fp32 training */
    m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, (int64_t)GPUPROBE_MAX_PARAMS), GPUPROBE_OK);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP32);
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_TRAINING);
    gpuprobe_plan p = plan_of(m, o);
    assert_true(p.weights_bytes == 4 * GPUPROBE_MAX_PARAMS);
    assert_true(p.optimizer_bytes == 8 * GPUPROBE_MAX_PARAMS);
    /* a margin near 2^63 on top: the total exceeds 2^64 */
    set(o, GPUPROBE_PLAN_MARGIN, INT64_MAX);
    set(o, GPUPROBE_PLAN_OVERHEAD, INT64_MAX);
    plan_fails(m, o, GPUPROBE_ERR_OVERFLOW, "the total");
    /* one fp32 parameter (4 bytes) and two huge figures: 2^64 - 2 is the
     * largest total there is, one byte more overflows */
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_WEIGHTS);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, 1), GPUPROBE_OK);
    set(o, GPUPROBE_PLAN_MARGIN, INT64_MAX - 4);
    p = plan_of(m, o);
    assert_true(p.total_bytes == UINT64_MAX - 1);
    set(o, GPUPROBE_PLAN_MARGIN, INT64_MAX - 3);
    assert_true(plan_of(m, o).total_bytes == UINT64_MAX);
    set(o, GPUPROBE_PLAN_MARGIN, INT64_MAX - 2);
    plan_fails(m, o, GPUPROBE_ERR_OVERFLOW, "the total");
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);

    /* the KV cache of 2^24 sequences x 2^32 tokens x 131,072 bytes = 2^73 */
    m = model_of(&llama31_8b);
    o = opts_new();
    set(o, GPUPROBE_PLAN_CONTEXT, INT64_C(1) << 32);
    set(o, GPUPROBE_PLAN_BATCH, INT64_C(1) << 24);
    plan_fails(m, o, GPUPROBE_ERR_OVERFLOW, "the KV cache of 16777216 sequences");
    /* ...and exactly at 2^64 - overflow, just below it - fine:
     * 2^32 tokens x 2^17 bytes x 2^14 sequences = 2^63 of cache */
    set(o, GPUPROBE_PLAN_BATCH, INT64_C(1) << 14);
    set(o, GPUPROBE_PLAN_PREFILL_CHUNK, 1);
    set(o, GPUPROBE_PLAN_OVERHEAD, 0);
    set(o, GPUPROBE_PLAN_MARGIN, 0);
    p = plan_of(m, o);
    assert_true(p.kv_cache_bytes == UINT64_C(1) << 63);
    set(o, GPUPROBE_PLAN_BATCH, INT64_C(1) << 15);
    plan_fails(m, o, GPUPROBE_ERR_OVERFLOW, "the KV cache");
    /* training activations past 2^64 (2^56 tokens): an overflow that names
     * the activations, not a figure computed from a wrapped product */
    {
        gpuprobe_plan_options *t = opts_new();
        set(t, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_TRAINING);
        set(t, GPUPROBE_PLAN_CONTEXT, INT64_C(1) << 32);
        set(t, GPUPROBE_PLAN_BATCH, INT64_C(1) << 24);
        plan_fails(m, t, GPUPROBE_ERR_OVERFLOW, "the activations");
        gpuprobe_plan_options_destroy(t);
    }
    /* the largest context never fails on overflow: it just does not fit */
    uint64_t l = 0;
    assert_int_equal(gpuprobe_plan_largest(NULL, m, o, GPUPROBE_PLAN_CONTEXT, UINT64_MAX, &l),
                     GPUPROBE_OK);
    assert_true(l > 0 && l < (UINT64_C(1) << 32));
    set(o, GPUPROBE_PLAN_CONTEXT, (int64_t)l);
    p = plan_of(m, o);
    set(o, GPUPROBE_PLAN_CONTEXT, (int64_t)l + 1);
    plan_fails(m, o, GPUPROBE_ERR_OVERFLOW, "exceed 2^64");
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- the largest context and batch ---- */

static void check_largest(const gpuprobe_model *m, gpuprobe_plan_options *o,
                          gpuprobe_plan_param param, uint64_t budget,
                          uint64_t want)
{
    uint64_t l = 0;
    int64_t keep = 0;
    assert_int_equal(gpuprobe_plan_options_get(o, param, &keep), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_largest(NULL, m, o, param, budget, &l), GPUPROBE_OK);
    if (l != want)
        fail_msg("largest %llu, want %llu", (unsigned long long)l, (unsigned long long)want);
    /* exact: the answer fits, one more does not */
    if (l > 0) {
        set(o, param, (int64_t)l);
        assert_true(plan_of(m, o).total_bytes <= budget);
    }
    set(o, param, (int64_t)l + 1);
    assert_true(plan_of(m, o).total_bytes > budget);
    set(o, param, keep);
}

static void test_largest(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_OVERHEAD, 0);
    set(o, GPUPROBE_PLAN_MARGIN, 0);
    /* 24 GiB, batch 1: the weights and one token's logits
     * (16,060,522,496 + 513,024) and 131,072 + 2 x 51,200 = 233,472 bytes
     * per token: floor(9,708,768,256 / 233,472) = 41,584 tokens */
    check_largest(m, o, GPUPROBE_PLAN_CONTEXT, 24 * GiB, 41584);
    /* batch at 4096 tokens: each sequence 4096 x 233,472 + 513,024 */
    check_largest(m, o, GPUPROBE_PLAN_BATCH, 24 * GiB, 10);
    /* below the weights: nothing */
    check_largest(m, o, GPUPROBE_PLAN_CONTEXT, UINT64_C(16060522496), 0);
    check_largest(m, o, GPUPROBE_PLAN_BATCH, GiB, 0);
    /* weights only: everything up to the bound fits */
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_WEIGHTS);
    uint64_t l = 0;
    assert_int_equal(gpuprobe_plan_largest(NULL, m, o, GPUPROBE_PLAN_CONTEXT, 24 * GiB, &l),
                     GPUPROBE_OK);
    assert_true(l == (UINT64_C(1) << 32));
    assert_int_equal(gpuprobe_plan_largest(NULL, m, o, GPUPROBE_PLAN_BATCH, 24 * GiB, &l),
                     GPUPROBE_OK);
    assert_true(l == (UINT64_C(1) << 24));
    /* training: the largest sequence length with checkpointing is longer */
    set(o, GPUPROBE_PLAN_WORKLOAD, GPUPROBE_WORKLOAD_TRAINING);
    uint64_t plain = 0, ckpt = 0;
    assert_int_equal(gpuprobe_plan_largest(NULL, m, o, GPUPROBE_PLAN_CONTEXT, 160 * GiB, &plain),
                     GPUPROBE_OK);
    set(o, GPUPROBE_PLAN_CHECKPOINTING, 1);
    assert_int_equal(gpuprobe_plan_largest(NULL, m, o, GPUPROBE_PLAN_CONTEXT, 160 * GiB, &ckpt),
                     GPUPROBE_OK);
    assert_true(plain > 0 && ckpt > 3 * plain);
    check_largest(m, o, GPUPROBE_PLAN_CONTEXT, 160 * GiB, ckpt);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* ---- against simulated devices ---- */

static char sysroot[256];

static gpuprobe_context *fleet_ctx(const gp_fake_cuda *fleet, uint64_t held)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gp_test_set_cuda(ctx, fleet);
    gp_test_set_cuda_held(ctx, held);
    /* the CPU: 64 GiB available of 128 GiB, no cgroup limit */
    snprintf(sysroot, sizeof sysroot, "%s/gpuprobe-plan-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(sysroot));
    sr_put(sysroot, "proc/meminfo", "MemTotal:       134217728 kB\n"
                                    "MemFree:         1000000 kB\n"
                                    "MemAvailable:    67108864 kB\n");
    sr_put(sysroot, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Simulated CPU\n\n");
    sr_put(sysroot, "proc/self/cgroup", "0::/\n");
    sr_put(sysroot, "sys/fs/cgroup/memory.max", "max\n");
    gp_test_set_sysroot(ctx, sysroot);
    return ctx;
}

static void fleet_done(gpuprobe_context *ctx)
{
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(sysroot);
}

static const gp_fake_cuda_device mixed[] = {
    {"Sim H200", 9, 0, 143 * GiB, 140 * GiB, 0},          /* held: free excludes it */
    {"Sim L4", 8, 9, 22 * GiB, 21 * GiB, 300 * MiB},      /* measured context */
    {"Sim T4", 7, 5, 15 * GiB, 14 * GiB + 700 * MiB, 0},  /* nothing known: default */
};
static const gp_fake_cuda mixed_fleet = {GPUPROBE_CUDA_AVAILABLE, "simulated", 3, mixed};

static void test_plan_device(void **state)
{
    (void)state;
    gpuprobe_context *ctx = fleet_ctx(&mixed_fleet, 0x1);
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_CONTEXT, 8192);
    gpuprobe_plan base = plan_of(m, o); /* pure: default overhead */

    static const struct {
        size_t dev;
        uint64_t overhead;
        gpuprobe_reserve_source source;
        uint32_t fits;
    } rows[] = {
        {0, 0, GPUPROBE_RESERVE_NONE, 1},                                    /* CPU, 64 GiB */
        {1, 0, GPUPROBE_RESERVE_CONTEXT_HELD, 1},                            /* H200 */
        {2, 300 * MiB, GPUPROBE_RESERVE_MEASURED, 1},                        /* L4 */
        {3, GPUPROBE_DEFAULT_CONTEXT_RESERVE, GPUPROBE_RESERVE_DEFAULT, 0},  /* T4 */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gpuprobe_plan p = GPUPROBE_PLAN_INIT;
        assert_int_equal(gpuprobe_plan_device(ctx, rows[i].dev, m, o, 0, &p), GPUPROBE_OK);
        assert_string_equal(gpuprobe_last_error(ctx), "");
        assert_true(p.overhead_bytes == rows[i].overhead);
        assert_int_equal(p.overhead_source, rows[i].source);
        assert_true(p.total_bytes == base.total_bytes - base.overhead_bytes + rows[i].overhead);
        assert_true(p.weights_bytes == base.weights_bytes);
        if (p.fits != rows[i].fits)
            fail_msg("device %zu: fits %u", rows[i].dev, p.fits);
        assert_int_equal(p.fits, p.total_bytes <= p.available_bytes);
        /* the largest context and batch, as the pure call gives them for
         * this device's overhead and free memory */
        gpuprobe_plan_options *d = opts_new();
        set(d, GPUPROBE_PLAN_CONTEXT, 8192);
        set(d, GPUPROBE_PLAN_OVERHEAD, (int64_t)rows[i].overhead);
        uint64_t lc = 0, lb = 0;
        assert_int_equal(gpuprobe_plan_largest(NULL, m, d, GPUPROBE_PLAN_CONTEXT, p.available_bytes, &lc), GPUPROBE_OK);
        assert_int_equal(gpuprobe_plan_largest(NULL, m, d, GPUPROBE_PLAN_BATCH, p.available_bytes, &lb), GPUPROBE_OK);
        assert_true(p.largest_context == lc && p.largest_batch == lb);
        assert_int_equal(p.largest_context >= 8192, p.fits);
        assert_int_equal(p.largest_batch >= 1, p.fits);
        gpuprobe_plan_options_destroy(d);
    }
    /* by hand, the H200: 140 GiB free (a whole number of 2 MiB pages) less
     * the allocation allowance (143 GiB / 1024 = 143 MiB, rounded up to
     * 144), nothing reserved, 1 GiB margin:
     * (150,172,860,416 - 1,073,741,824 - 16,060,522,496 - 513,024)
     * / 233,472 = 569,824 tokens */
    gpuprobe_plan h = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, o, 0, &h), GPUPROBE_OK);
    assert_true(h.available_bytes == 140 * GiB - 144 * MiB);
    assert_true(h.largest_context == 569824);
    /* the CPU: 64 GiB available */
    assert_int_equal(gpuprobe_plan_device(ctx, 0, m, o, 0, &h), GPUPROBE_OK);
    assert_true(h.available_bytes == 64 * GiB);
    /* the CPU holds the whole model whatever the GPUS option says */
    set(o, GPUPROBE_PLAN_GPUS, 2);
    gpuprobe_plan c2 = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 0, m, o, 0, &c2), GPUPROBE_OK);
    assert_true(c2.weights_bytes == base.weights_bytes);
    assert_int_equal(gpuprobe_plan_device(ctx, 3, m, o, 0, &c2), GPUPROBE_OK);
    assert_true(c2.weights_bytes == 2 * UINT64_C(4015263744));
    /* an overhead given by hand replaces the device's */
    set(o, GPUPROBE_PLAN_GPUS, 1);
    set(o, GPUPROBE_PLAN_OVERHEAD, 0);
    assert_int_equal(gpuprobe_plan_device(ctx, 3, m, o, 0, &c2), GPUPROBE_OK);
    assert_true(c2.overhead_bytes == 0);
    assert_int_equal(c2.overhead_source, GPUPROBE_RESERVE_NONE);
    /* errors: no such device, bad flags, no context; nothing written */
    gpuprobe_plan e = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 4, m, o, 0, &e), GPUPROBE_ERR_NOT_FOUND);
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, o, 2, &e), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_device(NULL, 1, m, o, 0, &e), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(e.params == 0 && e.total_bytes == 0);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
    fleet_done(ctx);
}

static void test_plan_gpus(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_70b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_CONTEXT, 8192);

    /* 141 GB of bf16 weights. Per GPU over t: t = 2 needs ~72 GB, t = 4
     * ~37 GB, t = 8 ~19 GB (plus KV, activations, overhead, margin). */
    static const gp_fake_cuda_device a100[] = {
        {"Sim A100 40GB", 8, 0, 40 * GiB, 39 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 39 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 20 * GiB, 0}, /* busy */
        {"Sim A100 40GB", 8, 0, 40 * GiB, 39 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 39 * GiB, 0},
    };
    static const gp_fake_cuda five = {GPUPROBE_CUDA_AVAILABLE, "simulated", 5, a100};
    gpuprobe_context *ctx = fleet_ctx(&five, 0x1f);
    size_t count = 0, devs[8] = {0};
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, devs, 8), GPUPROBE_OK);
    /* 3 does not divide 64 heads; 4 fit, skipping the busy one */
    assert_int_equal(count, 4);
    assert_int_equal(devs[0], 1);
    assert_int_equal(devs[1], 2);
    assert_int_equal(devs[2], 4);
    assert_int_equal(devs[3], 5);
    /* each share fits where it was put */
    set(o, GPUPROBE_PLAN_GPUS, 4);
    for (size_t i = 0; i < count; i++) {
        gpuprobe_plan p = GPUPROBE_PLAN_INIT;
        assert_int_equal(gpuprobe_plan_device(ctx, devs[i], m, o, 0, &p), GPUPROBE_OK);
        assert_int_equal(p.fits, 1);
    }
    gpuprobe_plan busy = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 3, m, o, 0, &busy), GPUPROBE_OK);
    assert_int_equal(busy.fits, 0);
    /* and 2 would not have been enough */
    set(o, GPUPROBE_PLAN_GPUS, 2);
    gpuprobe_plan two = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, o, 0, &two), GPUPROBE_OK);
    assert_int_equal(two.fits, 0);
    /* the GPUS option does not matter to the search; fewer slots than
     * GPUs: the count is still given */
    size_t one = 99;
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, &one, 1), GPUPROBE_OK);
    assert_int_equal(count, 4);
    assert_int_equal(one, 1);
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, NULL, 0), GPUPROBE_OK);
    assert_int_equal(count, 4);
    /* 8B fits one GPU: the one with most free memory, lowest index first */
    gpuprobe_model *small = model_of(&llama31_8b);
    for (size_t i = 0; i < 8; i++)
        devs[i] = 99;
    assert_int_equal(gpuprobe_plan_gpus(ctx, small, NULL, 0, &count, devs, 8), GPUPROBE_OK);
    assert_int_equal(count, 1);
    assert_int_equal(devs[0], 1);
    for (size_t i = 1; i < 8; i++)
        assert_int_equal(devs[i], 99); /* only count slots are written */
    /* 128k context for the 70B: no number of these GPUs */
    set(o, GPUPROBE_PLAN_CONTEXT, 131072);
    set(o, GPUPROBE_PLAN_BATCH, 16);
    count = 77;
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, devs, 8), GPUPROBE_ERR_NO_FIT);
    assert_int_equal(count, 77);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "no number of the 5 CUDA devices"));
    /* the message gives one GPU's need and the need of each of the most
     * GPUs the 64 heads split over (4 of the 5), which is less */
    {
        const char *msg = gpuprobe_last_error(ctx);
        const char *one_at = strstr(msg, "one GPU needs "), *each_at = strstr(msg, "each needs ");
        unsigned long long one_needs = 0, each_needs = 0;
        assert_non_null(one_at);
        assert_non_null(each_at);
        assert_int_equal(sscanf(one_at, "one GPU needs %llu", &one_needs), 1);
        assert_int_equal(sscanf(each_at, "each needs %llu", &each_needs), 1);
        if (each_needs == 0 || each_needs >= one_needs || each_needs < one_needs / 5)
            fail_msg("\"%s\": each of 4 GPUs needs %llu bytes, one alone %llu", msg,
                     each_needs, one_needs);
    }
    /* bad arguments; the model is checked before any device */
    gpuprobe_model *empty = NULL;
    assert_int_equal(gpuprobe_model_create(&empty), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_gpus(ctx, empty, NULL, 0, &count, NULL, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "empty"));
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, NULL, 1, &count, NULL, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, NULL, 0, NULL, NULL, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_plan_gpus(NULL, m, NULL, 0, &count, NULL, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_model_destroy(empty);
    fleet_done(ctx);

    /* the GPU with most room is found wherever it is, and named when
     * nothing fits (its room: free less the 40 MiB allowance of 40 GiB) */
    static const gp_fake_cuda_device rising[] = {
        {"Sim A100 40GB", 8, 0, 40 * GiB, 24 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 30 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 36 * GiB, 0},
    };
    static const gp_fake_cuda three = {GPUPROBE_CUDA_AVAILABLE, "simulated", 3, rising};
    ctx = fleet_ctx(&three, 0x7);
    count = 0;
    assert_int_equal(gpuprobe_plan_gpus(ctx, small, NULL, 0, &count, devs, 8), GPUPROBE_OK);
    assert_int_equal(count, 1);
    assert_int_equal(devs[0], 3);
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, devs, 8), GPUPROBE_ERR_NO_FIT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "no number of the 3 CUDA devices"));
    char most[96];
    snprintf(most, sizeof most, "the most room for allocations is %llu bytes (cuda:2)",
             (unsigned long long)(36 * GiB - 40 * MiB));
    if (!strstr(gpuprobe_last_error(ctx), most))
        fail_msg("\"%s\" does not say \"%s\"", gpuprobe_last_error(ctx), most);
    fleet_done(ctx);

    /* The message counts the GPUs that have room for the share of the most
     * GPUs tried: one big GPU that holds a third of the 70B at 128k but
     * not all of it, two small ones that hold neither. */
    {
        static const gp_fake_cuda_device tiny[] = {
            {"Sim tiny", 8, 0, 2 * GiB, 1 * GiB, 0},
            {"Sim tiny", 8, 0, 2 * GiB, 1 * GiB, 0},
            {"Sim tiny", 8, 0, 2 * GiB, 1 * GiB, 0},
        };
        static const gp_fake_cuda tiny3 = {GPUPROBE_CUDA_AVAILABLE, "simulated", 3, tiny};
        ctx = fleet_ctx(&tiny3, 0);
        assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, devs, 8), GPUPROBE_ERR_NO_FIT);
        unsigned long long one_needs = 0, each_needs = 0;
        const char *msg = gpuprobe_last_error(ctx);
        assert_int_equal(sscanf(strstr(msg, "one GPU needs "), "one GPU needs %llu", &one_needs), 1);
        assert_int_equal(sscanf(strstr(msg, "each needs "), "each needs %llu", &each_needs), 1);
        assert_non_null(strstr(msg, "and 0 have room"));
        fleet_done(ctx);
        /* room for a third and its context, not for the whole */
        assert_true(one_needs > each_needs + GPUPROBE_DEFAULT_CONTEXT_RESERVE);
        gp_fake_cuda_device lopsided[] = {
            {"Sim big", 9, 0, one_needs + 4 * GiB, one_needs, 0},
            {"Sim tiny", 8, 0, 2 * GiB, 1 * GiB, 0},
            {"Sim tiny", 8, 0, 2 * GiB, 1 * GiB, 0},
        };
        const gp_fake_cuda lop = {GPUPROBE_CUDA_AVAILABLE, "simulated", 3, lopsided};
        ctx = fleet_ctx(&lop, 0);
        assert_int_equal(gpuprobe_plan_gpus(ctx, m, o, 0, &count, devs, 8), GPUPROBE_ERR_NO_FIT);
        assert_non_null(strstr(gpuprobe_last_error(ctx), "plus overhead, and 1 have room"));
        fleet_done(ctx);
    }

    /* one GPU (two devices: the CPU and it) is a pool too */
    static const gp_fake_cuda single = {GPUPROBE_CUDA_AVAILABLE, "simulated", 1, a100};
    ctx = fleet_ctx(&single, 0x1);
    count = 0;
    assert_int_equal(gpuprobe_plan_gpus(ctx, small, NULL, 0, &count, devs, 8), GPUPROBE_OK);
    assert_int_equal(count, 1);
    assert_int_equal(devs[0], 1);
    fleet_done(ctx);

    /* no CUDA: the cause, and the CPU is not a GPU */
    static const gp_fake_cuda none = {GPUPROBE_CUDA_NO_DRIVER, "simulated: no driver", 0, NULL};
    ctx = fleet_ctx(&none, 0);
    assert_int_equal(gpuprobe_plan_gpus(ctx, small, NULL, 0, &count, devs, 8),
                     GPUPROBE_ERR_CUDA_UNAVAILABLE);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "no driver"));
    /* ...while the CPU plan still works */
    gpuprobe_plan c = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 0, small, NULL, 0, &c), GPUPROBE_OK);
    assert_int_equal(c.fits, 1);
    fleet_done(ctx);
    gpuprobe_model_destroy(small);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* A plan that needs exactly what allocations can get fits; one byte less
 * free and it does not, as the free memory then holds one 2 MiB page
 * less. (The margin makes the total a whole number of pages.) */
static void test_plan_device_exact_fit(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    gpuprobe_plan p = plan_of(m, o);
    uint64_t page = GPUPROBE_ALLOC_PAGE, allowance = 144 * MiB; /* 143 GiB / 1024, rounded up */
    set(o, GPUPROBE_PLAN_MARGIN, (int64_t)(GiB + page - p.total_bytes % page));
    gp_fake_cuda_device dev[] = {{"Sim H200", 9, 0, 143 * GiB, 140 * GiB, 0}};
    gp_fake_cuda fleet = {GPUPROBE_CUDA_AVAILABLE, "simulated", 1, dev};
    gpuprobe_context *ctx = fleet_ctx(&fleet, 0x1);
    p = (gpuprobe_plan)GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, o, 0, &p), GPUPROBE_OK);
    assert_true(p.available_bytes == 140 * GiB - allowance);
    uint64_t need = p.total_bytes;
    assert_int_equal(need % page, 0);
    fleet_done(ctx);

    dev[0].free_bytes = need + allowance;
    ctx = fleet_ctx(&fleet, 0x1);
    p = (gpuprobe_plan)GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, o, 0, &p), GPUPROBE_OK);
    assert_true(p.total_bytes == need);
    assert_true(p.available_bytes == need);
    assert_int_equal(p.fits, 1);
    fleet_done(ctx);

    dev[0].free_bytes = need + allowance - 1;
    ctx = fleet_ctx(&fleet, 0x1);
    p = (gpuprobe_plan)GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, o, 0, &p), GPUPROBE_OK);
    assert_true(p.available_bytes == need - page);
    assert_int_equal(p.fits, 0);
    fleet_done(ctx);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

/* Splitting over GPUs counts each GPU's own CUDA context overhead: GPUs
 * with room for the whole model but not for it and their measured context
 * take two for the model. */
static void test_plan_gpus_overhead(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_plan_options *o = opts_new();
    set(o, GPUPROBE_PLAN_OVERHEAD, 0);
    uint64_t bare = plan_of(m, o).total_bytes; /* no overhead at all */
    gpuprobe_plan_options_destroy(o);
    gp_fake_cuda_device devs[] = {
        {"Sim L40", 8, 9, 48 * GiB, bare + 100 * MiB, 300 * MiB},
        {"Sim L40", 8, 9, 48 * GiB, bare + 100 * MiB, 300 * MiB},
    };
    gp_fake_cuda fleet = {GPUPROBE_CUDA_AVAILABLE, "simulated", 2, devs};
    gpuprobe_context *ctx = fleet_ctx(&fleet, 0);
    /* alone, one of them is short by the 300 MiB context */
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 1, m, NULL, 0, &p), GPUPROBE_OK);
    assert_true(p.overhead_bytes == 300 * MiB);
    assert_int_equal(p.fits, 0);
    size_t count = 0, out[4] = {0};
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, NULL, 0, &count, out, 4), GPUPROBE_OK);
    assert_int_equal(count, 2);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    fleet_done(ctx);
    gpuprobe_model_destroy(m);
}

/* The GPU with the most free memory is found when it lies between one with
 * less (before it) and one with more than the first (after it): free 10,
 * 30 and 20 GiB; a model that fits 20 GiB goes on the 30 GiB one. */
static void test_plan_gpus_order(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    static const gp_fake_cuda_device devs[] = {
        {"Sim A100 40GB", 8, 0, 40 * GiB, 10 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 30 * GiB, 0},
        {"Sim A100 40GB", 8, 0, 40 * GiB, 20 * GiB, 0},
    };
    static const gp_fake_cuda fleet = {GPUPROBE_CUDA_AVAILABLE, "simulated", 3, devs};
    gpuprobe_context *ctx = fleet_ctx(&fleet, 0x7);
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_device(ctx, 3, m, NULL, 0, &p), GPUPROBE_OK);
    assert_int_equal(p.fits, 1); /* the 20 GiB one would do too */
    size_t count = 0, out[4] = {0};
    assert_int_equal(gpuprobe_plan_gpus(ctx, m, NULL, 0, &count, out, 4), GPUPROBE_OK);
    assert_int_equal(count, 1);
    assert_int_equal(out[0], 2);
    fleet_done(ctx);
    gpuprobe_model_destroy(m);
}

int main(void)
{
    unsetenv("GPUPROBE_DEVICE");
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_counts),
        cmocka_unit_test(test_kv_llama31_8b),
        cmocka_unit_test(test_gqa_vs_mha),
        cmocka_unit_test(test_moe_total_vs_active),
        cmocka_unit_test(test_moe_two_experts_and_one),
        cmocka_unit_test(test_int4_scales),
        cmocka_unit_test(test_inference_breakdown),
        cmocka_unit_test(test_training),
        cmocka_unit_test(test_by_params),
        cmocka_unit_test(test_tensor_parallel),
        cmocka_unit_test(test_model_errors),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_context_zero),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_largest),
        cmocka_unit_test(test_plan_device),
        cmocka_unit_test(test_plan_gpus),
        cmocka_unit_test(test_plan_device_exact_fit),
        cmocka_unit_test(test_plan_gpus_overhead),
        cmocka_unit_test(test_plan_gpus_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
