/*
 * test_speed.c - the speed estimate (lib/speed.c): worked figures of
 * decode and prefill for real architectures (Llama-3.1-8B, Mixtral-8x7B),
 * the decode steps' sum against a step-by-step loop (the KV cache read
 * growing, a crossing from compute to memory, a sliding window), the
 * efficiency, the per-layer overhead, tensor parallelism, the options'
 * bounds, bad input refused with nothing written, and the measurement on
 * this CPU kept in the context (a second estimate measures nothing).
 *
 * The worked figures are computed by hand from the formulas in gpuprobe.h
 * ("How fast will it run?") and docs/speed.md; the arithmetic is in the
 * comments.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "cpu_bf16.h"

typedef struct arch {
    int64_t layers, hidden, heads, kv_heads, inter, vocab, tied, experts, per_token, window,
        bias;
} arch;

static const arch llama31_8b = {32, 4096, 32, 8, 14336, 128256, 0, 0, 0, 0, 0};
static const arch mixtral_8x7b = {32, 4096, 32, 8, 14336, 32000, 0, 8, 2, 0, 0};
/* Small enough to time in milliseconds on a CPU. */
static const arch tiny = {2, 64, 4, 2, 128, 256, 1, 0, 0, 0, 0};

static gpuprobe_model *model_of(const arch *a)
{
    gpuprobe_model *m = NULL;
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    const int64_t v[] = {a->layers, a->hidden, a->heads, a->kv_heads, 0, a->inter, a->vocab,
                         a->tied, a->experts, a->per_token, a->window, a->bias};
    for (int p = GPUPROBE_MODEL_LAYERS; p <= GPUPROBE_MODEL_QKV_BIAS; p++)
        assert_int_equal(gpuprobe_model_set(m, (gpuprobe_model_param)p, v[p - 1]), GPUPROBE_OK);
    return m;
}

static gpuprobe_speed_options *speed_opts(int64_t prompt, int64_t generate, int64_t overhead_ns)
{
    gpuprobe_speed_options *o = NULL;
    assert_int_equal(gpuprobe_speed_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_PROMPT, prompt), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_GENERATE, generate), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_LAYER_OVERHEAD_NS, overhead_ns),
                     GPUPROBE_OK);
    return o;
}

static gpuprobe_speed_figures figures(double read, double dec, double mlp, double attn)
{
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    f.read_bytes_per_s = read;
    f.decode_flops = dec;
    f.prefill_flops = mlp;
    f.prefill_attn_flops = attn;
    return f;
}

static gpuprobe_speed speed_of(const gpuprobe_model *m, const gpuprobe_plan_options *po,
                               const gpuprobe_speed_options *so, const gpuprobe_speed_figures *f)
{
    gpuprobe_speed s = GPUPROBE_SPEED_INIT;
    gpuprobe_status st = gpuprobe_speed_compute(NULL, m, po, so, f, 0, &s);
    if (st != GPUPROBE_OK)
        fail_msg("speed: %s", gpuprobe_status_name(st));
    return s;
}

/* |got / want - 1| < 1e-12 */
static void near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-12 * fabs(want)))
        fail_msg("%s: %.17g, want %.17g", what, got, want);
}

/* ---- decode: the bytes of a step ---- */

/* Llama-3.1-8B in bf16 at an 8k context: the weights a step reads (all but
 * the untied embedding matrix, of which a lookup reads one row) plus
 * 8192 x 131,072 B of KV cache. */
static void test_decode_bytes_llama(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    /* P = 8191 and G = 2: one step, at context 8192. */
    gpuprobe_speed_options *so = speed_opts(8191, 2, 0);
    gpuprobe_speed_figures f = figures(1e12, 1e15, 1e15, 0);
    gpuprobe_speed s = speed_of(m, NULL, so, &f);
    /* weights 8,030,261,248 x 2 = 16,060,522,496; embedding 128,256 x 4096
     * x 2 = 1,050,673,152; read: 15,009,849,344 */
    assert_true(s.decode_weight_bytes == 15009849344.0);
    /* + 8192 x 131,072 = 1,073,741,824: 16,083,591,168 */
    assert_true(s.decode_bytes_first == 16083591168.0);
    assert_true(s.decode_bytes_last == 16083591168.0);
    assert_true(s.decode_bytes_mean == 16083591168.0);
    /* memory-bound: 16.08 ms at 1 TB/s; FLOP 2 x 7.0e9 at 1 PFLOP/s: 14 us */
    assert_int_equal(s.decode_bound, GPUPROBE_SPEED_BOUND_MEMORY);
    assert_int_equal(s.decode_memory_steps, 1);
    near(s.decode_s, 16083591168.0 / 1e12, "decode_s");
    near(s.decode_tokens_per_s, 1e12 / 16083591168.0, "tokens/s");
    /* FLOP of the step: 2 x (32 x (4096 x 10240 + 3 x 4096 x 14336) +
     * 128,256 x 4096) + 4 x 32 x 4096 x 8192 */
    near(s.decode_flop_mean, 2.0 * (32.0 * (4096.0 * 10240 + 3.0 * 4096 * 14336) + 128256.0 * 4096) +
                                 4.0 * 32 * 4096 * 8192,
         "decode FLOP");
    assert_true(s.read_bytes_per_s == 1e12);
    assert_true(s.efficiency == 1.0);
    assert_int_equal(s.flags, 0);

    /* A batch of 4 reads the weights once and four caches. */
    gpuprobe_plan_options *po = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_BATCH, 4), GPUPROBE_OK);
    s = speed_of(m, po, so, &f);
    assert_true(s.decode_bytes_first == 15009849344.0 + 4 * 1073741824.0);
    near(s.decode_batch_tokens_per_s, 4 * s.decode_tokens_per_s, "batch tokens/s");
    gpuprobe_plan_options_destroy(po);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
}

/* Mixtral-8x7B: one token reads 2 of the 8 experts, so a step reads the
 * active parameters' bytes (the plan's own count, made another way) less
 * the embedding; a batch of 2 touches 8 (1 - (3/4)^2) = 3.5 experts a
 * layer in expectation. */
static void test_decode_bytes_moe(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&mixtral_8x7b);
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_compute(NULL, m, NULL, 0, &p), GPUPROBE_OK);
    gpuprobe_speed_options *so = speed_opts(1, 2, 0);
    gpuprobe_speed_figures f = figures(1e12, 1e15, 1e15, 0);
    gpuprobe_speed s = speed_of(m, NULL, so, &f);
    double embedding = 32000.0 * 4096 * 2; /* 262,144,000 */
    assert_true(s.decode_weight_bytes == 2.0 * (double)p.active_params - embedding);
    /* active 12,879,925,248 (46,702,792,704 less 6 experts of 32 x 3 x
     * 4096 x 14336 = 5,637,144,576 each): 25,497,706,496 bytes */
    assert_true(s.decode_weight_bytes == 25497706496.0);

    gpuprobe_plan_options *po = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_BATCH, 2), GPUPROBE_OK);
    s = speed_of(m, po, so, &f);
    /* 4.5 idle experts of 11,274,289,152 bytes */
    near(s.decode_weight_bytes, 2.0 * 46702792704.0 - 4.5 * 11274289152.0 - embedding,
         "batch of 2");
    gpuprobe_plan_options_destroy(po);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
}

/* ---- decode: the sum over the steps ---- */

/* The decode figures summed step by step, as the closed form must give. */
typedef struct brute {
    double sum, mem_steps, first, last;
} brute;

static brute step_by_step(const arch *a, int64_t P, int64_t G, int64_t B, double read,
                          double flops, double layer_s)
{
    gpuprobe_model *m = model_of(a);
    gpuprobe_plan_options *po = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_BATCH, B), GPUPROBE_OK);
    gp_reads r;
    assert_int_equal(gp_plan_reads(NULL, m, po, &r), GPUPROBE_OK);
    double L = (double)a->layers, h = (double)a->hidden, I = (double)a->inter;
    double q = (double)(r.s.q_dim), kvd = (double)r.s.kv_dim, V = (double)a->vocab;
    double w = r.weights - (a->tied ? 0 : r.embedding);
    double tok = L * (h * (2 * q + 2 * kvd) + 3 * h * I) + V * h;
    brute b = {0, 0, 0, 0};
    for (int64_t j = 1; j <= (G > 1 ? G - 1 : 1); j++) {
        double c = (double)(P + j);
        if (a->window && c > (double)a->window)
            c = (double)a->window;
        double mem = (w + (double)B * r.kv_per_token * c) / read;
        double cmp = (2 * (double)B * tok + 4 * (double)B * L * q * c) / flops;
        double t = (mem >= cmp ? mem : cmp) + L * layer_s;
        if (j == 1)
            b.first = t;
        b.last = t;
        if (G > 1) {
            b.sum += t;
            b.mem_steps += mem >= cmp;
        }
    }
    gpuprobe_plan_options_destroy(po);
    gpuprobe_model_destroy(m);
    return b;
}

static void test_decode_sum(void **state)
{
    (void)state;
    static const arch windowed = {4, 256, 8, 2, 512, 1000, 0, 0, 0, 700, 0};
    static const struct {
        const arch *a;
        int64_t P, G, B;
        double read, flops;
        int64_t overhead_ns;
    } rows[] = {
        /* memory-bound throughout, the cache read growing */
        {&llama31_8b, 1000, 101, 1, 1e12, 1e15, 5000},
        /* a large batch at a small throughput: compute-bound at first,
         * memory-bound once the caches are long (the lines cross) */
        {&tiny, 10, 3000, 64, 1e9, 3e9, 0},
        /* the window caps the keys after 700 tokens */
        {&windowed, 600, 300, 2, 1e9, 1e12, 1000},
        {&windowed, 900, 50, 1, 1e9, 1e12, 0},
        /* one token: no step; the figures of the next */
        {&llama31_8b, 100, 1, 1, 1e12, 1e15, 5000},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gpuprobe_model *m = model_of(rows[i].a);
        gpuprobe_plan_options *po = NULL;
        assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
        assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_BATCH, rows[i].B),
                         GPUPROBE_OK);
        gpuprobe_speed_options *so = speed_opts(rows[i].P, rows[i].G, rows[i].overhead_ns);
        gpuprobe_speed_figures f = figures(rows[i].read, rows[i].flops, 1e15, 0);
        gpuprobe_speed s = speed_of(m, po, so, &f);
        brute b = step_by_step(rows[i].a, rows[i].P, rows[i].G, rows[i].B, rows[i].read,
                               rows[i].flops, (double)rows[i].overhead_ns * 1e-9);
        if (fabs(s.decode_s - b.sum) > 1e-9 * b.sum || fabs(s.decode_step_first_s - b.first) >
                                                           1e-12 * b.first ||
            fabs(s.decode_step_last_s - b.last) > 1e-12 * b.last ||
            (double)s.decode_memory_steps != b.mem_steps)
            fail_msg("row %zu: sum %.12g (want %.12g), first %.12g (%.12g), last %.12g (%.12g), "
                     "memory steps %llu (%g)",
                     i, s.decode_s, b.sum, s.decode_step_first_s, b.first, s.decode_step_last_s,
                     b.last, (unsigned long long)s.decode_memory_steps, b.mem_steps);
        if (rows[i].G > 1)
            near(s.decode_tokens_per_s, (double)(rows[i].G - 1) / b.sum, "tokens/s");
        else
            near(s.decode_tokens_per_s, 1 / b.first, "tokens/s of one token");
        if (i == 1) /* the crossing: some steps of each kind */
            assert_true(b.mem_steps > 0 && b.mem_steps < (double)(rows[i].G - 1));
        assert_int_equal(s.flags & GPUPROBE_SPEED_WINDOWED,
                         rows[i].a->window ? GPUPROBE_SPEED_WINDOWED : 0);
        gpuprobe_speed_options_destroy(so);
        gpuprobe_plan_options_destroy(po);
        gpuprobe_model_destroy(m);
    }
}

/* ---- prefill ---- */

/* Llama-3.1-8B, a 512-token prompt: FLOP by shape, each at its own rate. */
static void test_prefill_llama(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_speed_options *so = speed_opts(512, 128, 5000);
    /* distinct rates, so that a FLOP counted at the wrong shape shows */
    gpuprobe_speed_figures f = figures(2e12, 1e13, 4e14, 2e14);
    gpuprobe_speed s = speed_of(m, NULL, so, &f);
    /* q, k, v, o: 2 x 512 x 32 x 4096 x (2 x 4096 + 2 x 1024) = 1,374,389,534,720
     * MLP:        2 x 512 x 32 x 3 x 4096 x 14336          = 5,772,436,045,824
     * attention:  4 x 32 x 4096 x (512 x 513 / 2)          =    68,853,694,464
     * output head for the last token: 2 x 4096 x 128,256   =     1,050,673,152 */
    assert_true(s.prefill_flop == 7216729948160.0);
    near(s.prefill_compute_s, (1374389534720.0 + 68853694464.0) / 2e14 + 5772436045824.0 / 4e14 +
                                  1050673152.0 / 1e13,
         "prefill compute");
    /* memory: the weights once (15,009,849,344) and 512 tokens of cache */
    assert_true(s.prefill_bytes == 15009849344.0 + 512 * 131072.0);
    near(s.prefill_memory_s, s.prefill_bytes / 2e12, "prefill memory");
    assert_int_equal(s.prefill_bound, GPUPROBE_SPEED_BOUND_COMPUTE);
    near(s.prefill_s, s.prefill_compute_s + 32 * 5e-6, "prefill with overhead");
    near(s.prefill_flops, s.prefill_flop / s.prefill_compute_s, "prefill rate");
    near(s.total_s, s.prefill_s + s.decode_s, "total");
    assert_true(s.layer_overhead_s == 5e-6);

    /* a short prompt at a slow memory: memory-bound */
    gpuprobe_speed_options_destroy(so);
    so = speed_opts(4, 2, 0);
    f = figures(1e10, 1e13, 4e14, 2e14);
    s = speed_of(m, NULL, so, &f);
    assert_int_equal(s.prefill_bound, GPUPROBE_SPEED_BOUND_MEMORY);
    near(s.prefill_s, (15009849344.0 + 4 * 131072.0) / 1e10, "memory-bound prefill");
    /* no attention rate given: the MLP's serves */
    f = figures(1e10, 1e13, 4e14, 0);
    s = speed_of(m, NULL, so, &f);
    near(s.prefill_compute_s,
         (2.0 * 4 * 32 * 4096 * 10240 + 4.0 * 32 * 4096 * 10 + 2.0 * 4 * 32 * 3 * 4096 * 14336) /
                 4e14 +
             1050673152.0 / 1e13,
         "one prefill rate");
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
}

/* The efficiency scales every rate; tensor parallelism is one GPU's share
 * and says the communication is not counted. */
static void test_efficiency_and_tp(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&llama31_8b);
    gpuprobe_speed_options *so = speed_opts(512, 65, 0);
    gpuprobe_speed_figures f = figures(1e12, 1e15, 1e15, 1e15);
    gpuprobe_speed full = speed_of(m, NULL, so, &f);
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_EFFICIENCY, 50), GPUPROBE_OK);
    gpuprobe_speed half = speed_of(m, NULL, so, &f);
    near(half.decode_s, 2 * full.decode_s, "half the rate");
    near(half.prefill_s, 2 * full.prefill_s, "half the rate, prefill");
    assert_true(half.read_bytes_per_s == 5e11 && half.decode_flops == 5e14);
    assert_true(half.efficiency == 0.5);

    gpuprobe_plan_options *po = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_GPUS, 2), GPUPROBE_OK);
    gpuprobe_speed tp = speed_of(m, po, so, &f);
    assert_true(tp.flags & GPUPROBE_SPEED_TP_NOT_MODELLED);
    assert_true(!(half.flags & GPUPROBE_SPEED_TP_NOT_MODELLED));
    /* one GPU's share: half the layers' matrices and of the output head,
     * the norms ((32 x 2 + 1) x 4096 x 2 = 532,480 bytes) whole:
     * (15,009,849,344 - 532,480) / 2 + 532,480 = 7,505,190,912 */
    assert_true(tp.decode_weight_bytes == 7505190912.0);
    gpuprobe_plan_options_destroy(po);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
}

/* ---- options and bad input ---- */

static void test_options(void **state)
{
    (void)state;
    int64_t lo = 0, hi = 0, v = 0;
    assert_int_equal(gpuprobe_speed_param_bounds(GPUPROBE_SPEED_PROMPT, &lo, &hi), GPUPROBE_OK);
    assert_true(lo == 1 && hi == INT64_C(1) << 32);
    assert_int_equal(gpuprobe_speed_param_bounds(GPUPROBE_SPEED_EFFICIENCY, &lo, &hi), GPUPROBE_OK);
    assert_true(lo == 1 && hi == 100);
    assert_int_equal(gpuprobe_speed_param_bounds(GPUPROBE_SPEED_CPU_THREADS, &lo, &hi),
                     GPUPROBE_OK);
    assert_true(lo == 0 && hi == 1024); /* the bandwidth's and the matmul's */
    assert_int_equal(gpuprobe_speed_param_bounds((gpuprobe_speed_param)8, &lo, &hi),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_speed_options *o = NULL;
    assert_int_equal(gpuprobe_speed_options_create(&o), GPUPROBE_OK);
    static const int64_t defaults[][2] = {
        {GPUPROBE_SPEED_PROMPT, 512},          {GPUPROBE_SPEED_GENERATE, 128},
        {GPUPROBE_SPEED_LAYER_OVERHEAD_NS, 5000}, {GPUPROBE_SPEED_EFFICIENCY, 100},
        {GPUPROBE_SPEED_BUDGET_MS, 100},       {GPUPROBE_SPEED_BUFFER_BYTES, 0},
        {GPUPROBE_SPEED_MAX_ROWS, 2048},        {GPUPROBE_SPEED_CPU_THREADS, 0},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        assert_int_equal(gpuprobe_speed_options_get(o, (gpuprobe_speed_param)defaults[i][0], &v),
                         GPUPROBE_OK);
        assert_true(v == defaults[i][1]);
    }
    /* zero tokens, a zero efficiency: refused, nothing changed */
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_PROMPT, 0),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_GENERATE, 0),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_options_set(o, GPUPROBE_SPEED_EFFICIENCY, 0),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_options_get(o, GPUPROBE_SPEED_PROMPT, &v), GPUPROBE_OK);
    assert_true(v == 512);
    assert_int_equal(gpuprobe_speed_options_set(NULL, GPUPROBE_SPEED_PROMPT, 1),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_options_create(NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    gpuprobe_speed_options_destroy(o);
    gpuprobe_speed_options_destroy(NULL);
}

/* The estimate fails with st and a message containing part; out untouched. */
static void compute_fails(const gpuprobe_model *m, const gpuprobe_speed_figures *f,
                          unsigned flags, size_t size, gpuprobe_status st, const char *part)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gpuprobe_speed s = GPUPROBE_SPEED_INIT;
    s.size = size;
    s.prefill_s = 12345;
    assert_int_equal(gpuprobe_speed_compute(ctx, m, NULL, NULL, f, flags, &s), st);
    assert_true(s.prefill_s == 12345);
    if (!strstr(gpuprobe_last_error(ctx), part))
        fail_msg("message \"%s\" lacks \"%s\"", gpuprobe_last_error(ctx), part);
    assert_int_equal(gpuprobe_speed_compute(NULL, m, NULL, NULL, f, flags, &s), st);
    gpuprobe_context_destroy(ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    gpuprobe_model *m = model_of(&tiny);
    gpuprobe_speed_figures ok = figures(1e9, 1e9, 1e9, 0);
    const size_t full = sizeof(gpuprobe_speed);
    compute_fails(NULL, &ok, 0, full, GPUPROBE_ERR_INVALID_ARGUMENT, "model is NULL");
    compute_fails(m, NULL, 0, full, GPUPROBE_ERR_INVALID_ARGUMENT, "fig is NULL");
    compute_fails(m, &ok, 1, full, GPUPROBE_ERR_INVALID_ARGUMENT, "flags must be 0");
    compute_fails(m, &ok, 0, 8, GPUPROBE_ERR_INVALID_ARGUMENT, "GPUPROBE_SPEED_INIT");
    static const struct {
        double read, dec, mlp, attn;
        const char *which;
    } bad[] = {
        {0, 1e9, 1e9, 0, "read_bytes_per_s"},   {-1, 1e9, 1e9, 0, "read_bytes_per_s"},
        {NAN, 1e9, 1e9, 0, "read_bytes_per_s"}, {1e9, 0, 1e9, 0, "decode_flops"},
        {1e9, 1e9, INFINITY, 0, "prefill_flops"}, {1e9, 1e9, 1e9, -1, "prefill_attn_flops"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpuprobe_speed_figures f = figures(bad[i].read, bad[i].dec, bad[i].mlp, bad[i].attn);
        compute_fails(m, &f, 0, full, GPUPROBE_ERR_INVALID_ARGUMENT, bad[i].which);
    }
    gpuprobe_speed_figures small = ok;
    small.size = 8;
    compute_fails(m, &small, 0, full, GPUPROBE_ERR_INVALID_ARGUMENT, "GPUPROBE_SPEED_FIGURES_INIT");
    /* rates so small that the times are beyond a double */
    gpuprobe_speed_figures tiny_rates = figures(1e-310, 1e-310, 1e-310, 0);
    compute_fails(m, &tiny_rates, 0, full, GPUPROBE_ERR_OVERFLOW, "beyond a double");
    /* a parameter count has no shapes */
    gpuprobe_model *count = NULL;
    assert_int_equal(gpuprobe_model_create(&count), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(count, GPUPROBE_MODEL_PARAMS, 7000000000), GPUPROBE_OK);
    compute_fails(count, &ok, 0, full, GPUPROBE_ERR_UNSUPPORTED, "give the architecture");
    /* an incomplete architecture: the plan's own message */
    gpuprobe_model *half = NULL;
    assert_int_equal(gpuprobe_model_create(&half), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(half, GPUPROBE_MODEL_LAYERS, 2), GPUPROBE_OK);
    compute_fails(half, &ok, 0, full, GPUPROBE_ERR_INVALID_ARGUMENT, "incomplete");

    /* the measurement refuses the same, and a device that is not there */
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    f.decode_flops = 777;
    assert_int_equal(gpuprobe_speed_measure(NULL, 0, m, NULL, NULL, 0, &f),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, NULL, NULL, NULL, 0, &f),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, NULL, 0, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, NULL, 2, &f),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, count, NULL, NULL, 0, &f),
                     GPUPROBE_ERR_UNSUPPORTED);
    assert_int_equal(gpuprobe_speed_measure(ctx, 4096, m, NULL, NULL, 0, &f),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_true(f.decode_flops == 777);
    assert_null(ctx->speed); /* nothing measured, nothing kept */
    gpuprobe_context_destroy(ctx);
    gpuprobe_model_destroy(half);
    gpuprobe_model_destroy(count);
    gpuprobe_model_destroy(m);
}

/* ---- the measurement on this CPU, kept ---- */

/* A context whose CPU has no bf16 kernel (OpenBLAS's fp32 times bf16
 * weights; test_measure_bf16 has the kernel). */
static gpuprobe_context *ctx_without_bf16(void)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(setenv("GPUPROBE_CPU_AMX", "0", 1), 0);
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    unsetenv("GPUPROBE_CPU_AMX");
    return ctx;
}

/* P = 16, G = 8, a short measurement: 2 ms a shape, 1 MiB buffers. */
static gpuprobe_speed_options *quick_opts(void)
{
    gpuprobe_speed_options *so = speed_opts(16, 8, 0);
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_BUDGET_MS, 2), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_BUFFER_BYTES, 1 << 20),
                     GPUPROBE_OK);
    return so;
}

/* gpuprobe_speed_measure() that must succeed, saying why when it does not. */
static void measure(gpuprobe_context *ctx, const gpuprobe_model *m,
                    const gpuprobe_speed_options *so, gpuprobe_speed_figures *f)
{
    gpuprobe_status st = gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, f);
    if (st != GPUPROBE_OK)
        fail_msg("measure: %s: %s", gpuprobe_status_name(st), gpuprobe_last_error(ctx));
}

static void test_measure_cached(void **state)
{
    (void)state;
    gpuprobe_context *ctx = ctx_without_bf16();
    gpuprobe_model *m = model_of(&tiny);
    gpuprobe_speed_options *so = quick_opts();
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    measure(ctx, m, so, &f);
    assert_true(f.read_bytes_per_s > 0 && f.decode_flops > 0 && f.prefill_flops > 0 &&
                f.prefill_attn_flops > 0);
    /* bf16 weights, timed in the CPU's fp32 */
    assert_int_equal(f.dtype, GPUPROBE_DTYPE_FP32);
    assert_int_equal(f.flags, GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    /* four figures kept: the read bandwidth and three shapes (16 x 128 x 64,
     * 16 x 128 x 64, 16 x (64 + 2 x 32) x 64) */
    assert_non_null(ctx->speed);
    gpuprobe_speed_figures again = GPUPROBE_SPEED_FIGURES_INIT;
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(again.flags, GPUPROBE_SPEED_CACHED | GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    assert_true(again.read_bytes_per_s == f.read_bytes_per_s &&
                again.decode_flops == f.decode_flops && again.prefill_flops == f.prefill_flops &&
                again.prefill_attn_flops == f.prefill_attn_flops);
    /* another prompt length: the prefill shapes are new, the rest kept */
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_PROMPT, 32), GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(again.flags, GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    assert_true(again.read_bytes_per_s == f.read_bytes_per_s &&
                again.decode_flops == f.decode_flops);
    /* fp32 weights: the same dtype timed, nothing substituted, all kept */
    gpuprobe_plan_options *po = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&po), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(po, GPUPROBE_PLAN_WEIGHTS_DTYPE, GPUPROBE_DTYPE_FP32),
                     GPUPROBE_OK);
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, po, so, 0, &again), GPUPROBE_OK);
    assert_int_equal(again.flags, GPUPROBE_SPEED_CACHED);
    /* and an estimate from them */
    gpuprobe_speed s = GPUPROBE_SPEED_INIT;
    assert_int_equal(gpuprobe_speed_compute(ctx, m, po, so, &again, 0, &s), GPUPROBE_OK);
    assert_true(s.prefill_s > 0 && s.decode_tokens_per_s > 0);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    gpuprobe_plan_options_destroy(po);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
    gpuprobe_context_destroy(ctx);
}

/* GPUPROBE_SPEED_CPU_THREADS: the read test and the matmuls run with that
 * many threads, the figures are kept per count, and cpu_threads says what
 * the runs used (the fewest of them). Three threads on any machine: the
 * bandwidth's default is one per core and OpenBLAS's its own, so a count
 * that reached only one of the runs would show as the other's. */
static void test_measure_threads(void **state)
{
    (void)state;
    gpuprobe_context *ctx = ctx_without_bf16(); /* OpenBLAS's fp32 */
    gpuprobe_model *m = model_of(&tiny);
    gpuprobe_speed_options *so = quick_opts();
    /* the default: one per core for the read, OpenBLAS's count for the matmuls */
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    measure(ctx, m, so, &f);
    const int32_t dflt = f.cpu_threads;
    assert_true(dflt >= 1);
    const int64_t counts[] = {3, 1};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_CPU_THREADS, counts[i]),
                         GPUPROBE_OK);
        gpuprobe_speed_figures g = GPUPROBE_SPEED_FIGURES_INIT;
        assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &g), GPUPROBE_OK);
        /* measured again, not the default's figures */
        assert_int_equal(g.flags, GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
        assert_int_equal(g.cpu_threads, counts[i]);
        gpuprobe_speed_figures h = GPUPROBE_SPEED_FIGURES_INIT;
        assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &h), GPUPROBE_OK);
        assert_int_equal(h.flags, GPUPROBE_SPEED_CACHED | GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
        assert_int_equal(h.cpu_threads, counts[i]);
        assert_true(h.read_bytes_per_s == g.read_bytes_per_s && h.decode_flops == g.decode_flops);
    }
    /* back to the default: kept from the first measurement */
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_CPU_THREADS, 0), GPUPROBE_OK);
    gpuprobe_speed_figures d = GPUPROBE_SPEED_FIGURES_INIT;
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &d), GPUPROBE_OK);
    assert_int_equal(d.flags, GPUPROBE_SPEED_CACHED | GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    assert_int_equal(d.cpu_threads, dflt);
    assert_true(d.read_bytes_per_s == f.read_bytes_per_s);
    /* a caller's struct that ends at flags (no cpu_threads): taken, and
     * nothing written past its size */
    gpuprobe_speed_figures old = GPUPROBE_SPEED_FIGURES_INIT;
    old.size = GP_END_OF(gpuprobe_speed_figures, flags);
    old.cpu_threads = -7;
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &old), GPUPROBE_OK);
    assert_true(old.read_bytes_per_s == f.read_bytes_per_s);
    assert_int_equal(old.flags, GPUPROBE_SPEED_CACHED | GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    assert_int_equal(old.cpu_threads, -7);
    /* a count out of bounds: refused, the count in force unchanged */
    assert_int_equal(gpuprobe_speed_options_set(so, GPUPROBE_SPEED_CPU_THREADS, 1025),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    int64_t v = -1;
    assert_int_equal(gpuprobe_speed_options_get(so, GPUPROBE_SPEED_CPU_THREADS, &v), GPUPROBE_OK);
    assert_true(v == 0);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
    gpuprobe_context_destroy(ctx);
}

/* bf16 weights on a CPU with the AMX kernel are timed in bf16, nothing
 * substituted; without it in fp32, and the figures say so
 * (test_measure_cached turns it off); either way kept. */
static void test_measure_bf16(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gpuprobe_model *m = model_of(&tiny);
    gpuprobe_speed_options *so = quick_opts();
    char why[160];
    const int amx = gp_cpu_bf16(ctx, why, sizeof why);
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    measure(ctx, m, so, &f);
    assert_int_equal(f.dtype, amx ? GPUPROBE_DTYPE_BF16 : GPUPROBE_DTYPE_FP32);
    assert_int_equal(f.flags, amx ? 0u : GPUPROBE_SPEED_DTYPE_SUBSTITUTED);
    assert_true(f.prefill_flops > 0 && f.decode_flops > 0);
    if (!amx)
        print_message("no bf16 kernel here (%s): fp32 timed\n", why);
    /* again: the figures kept, in the same dtype */
    gpuprobe_speed_figures g = GPUPROBE_SPEED_FIGURES_INIT;
    assert_int_equal(gpuprobe_speed_measure(ctx, 0, m, NULL, so, 0, &g), GPUPROBE_OK);
    assert_int_equal(g.dtype, f.dtype);
    assert_int_equal(g.flags, f.flags | GPUPROBE_SPEED_CACHED);
    assert_true(g.prefill_flops == f.prefill_flops);
    gpuprobe_speed_options_destroy(so);
    gpuprobe_model_destroy(m);
    gpuprobe_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_bytes_llama), cmocka_unit_test(test_decode_bytes_moe),
        cmocka_unit_test(test_decode_sum),         cmocka_unit_test(test_prefill_llama),
        cmocka_unit_test(test_efficiency_and_tp),  cmocka_unit_test(test_options),
        cmocka_unit_test(test_bad_input),          cmocka_unit_test(test_measure_cached),
        cmocka_unit_test(test_measure_bf16),       cmocka_unit_test(test_measure_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
