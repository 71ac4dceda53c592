/*
 * speed.c - how fast will it run? The speed options, the estimate of a
 * model's prefill and decode from measured figures (pure arithmetic over
 * the shapes model.c derives and the bytes plan.c counts), and the short
 * measurement of those figures on a device (the bandwidth's read test and
 * the matmul at the model's shapes), kept in the context so that a second
 * estimate measures nothing again. The formulas are in gpuprobe.h ("How
 * fast will it run?") and docs/speed.md.
 *
 * Figures are doubles: an estimate is a rate times a count, and every
 * count here is below 2^53 for any model and workload the options accept,
 * so byte and FLOP figures stay exact integers where the arithmetic is.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "cpu_bf16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ---------------------------------------------------------- */

#define GP_SPEED_NPARAMS 8

/* A gp_params (params.c), first: gp_params_new() makes one. */
struct gpuprobe_speed_options {
    gp_params p;
};

static const gp_param_info speed_info[GP_SPEED_NPARAMS] = {
    [GPUPROBE_SPEED_PROMPT] = {1, INT64_C(1) << 32, 512},
    [GPUPROBE_SPEED_GENERATE] = {1, INT64_C(1) << 32, 128},
    [GPUPROBE_SPEED_LAYER_OVERHEAD_NS] = {0, INT64_C(1000000000), 5000},
    [GPUPROBE_SPEED_EFFICIENCY] = {1, 100, 100},
    [GPUPROBE_SPEED_BUDGET_MS] = {1, 60000, 100},
    [GPUPROBE_SPEED_BUFFER_BYTES] = {0, INT64_MAX, 0},
    [GPUPROBE_SPEED_MAX_ROWS] = {1, INT32_MAX, 2048},
    [GPUPROBE_SPEED_CPU_THREADS] = {0, 1024, 0}, /* the bandwidth's and matmul's bounds */
};
_Static_assert(GP_SPEED_NPARAMS <= GP_PARAMS_MAX, "speed options fit a gp_params");
static const gp_param_table speed_table = {speed_info, GP_SPEED_NPARAMS, 0};

gpuprobe_status gpuprobe_speed_options_create(gpuprobe_speed_options **out)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = gp_params_new(sizeof **out, &speed_table);
    return *out ? GPUPROBE_OK : GPUPROBE_ERR_OUT_OF_MEMORY;
}

void gpuprobe_speed_options_destroy(gpuprobe_speed_options *opts)
{
    gp_params_destroy(opts);
}

gpuprobe_status gpuprobe_speed_param_bounds(gpuprobe_speed_param param, int64_t *lower,
                                            int64_t *upper)
{
    return gp_params_bounds(&speed_table, (int)param, lower, upper);
}

gpuprobe_status gpuprobe_speed_options_set(gpuprobe_speed_options *opts,
                                           gpuprobe_speed_param param, int64_t value)
{
    return gp_params_set(opts ? &opts->p : NULL, (int)param, value);
}

gpuprobe_status gpuprobe_speed_options_get(const gpuprobe_speed_options *opts,
                                           gpuprobe_speed_param param, int64_t *value)
{
    return gp_params_get(opts ? &opts->p : NULL, (int)param, value);
}

/* The options' values, or the defaults for NULL. */
static void speed_values(const gpuprobe_speed_options *opts, int64_t *v)
{
    gp_params defaults;
    if (!opts)
        gp_params_init(&defaults, &speed_table);
    memcpy(v, opts ? opts->p.v : defaults.v, GP_SPEED_NPARAMS * sizeof *v);
}

/* ---- the model in figures ------------------------------------------------ */

/* One GPU's share of the model under the workload, as doubles. */
typedef struct sp_model {
    double L, h, q, kvd, I, V, k, E, window;
    double B, P, G;
    double kv_per_token;
    double expert_bytes;  /* one expert's matrices in every layer */
    double weights, embedding;
    int tied;
    double tok_params;    /* the matrix weights one token multiplies, with the head */
} sp_model;

static void sp_from(const gp_reads *r, const int64_t *v, sp_model *m)
{
    const gp_shape *s = &r->s;
    m->L = (double)s->layers;
    m->h = (double)s->hidden;
    m->q = (double)s->q_dim;
    m->kvd = (double)s->kv_dim;
    m->I = (double)s->inter;
    m->V = (double)s->vocab;
    m->k = (double)s->routed;
    m->E = (double)s->experts;
    m->window = (double)s->window;
    m->tied = s->tied != 0;
    m->B = (double)r->batch;
    m->P = (double)v[GPUPROBE_SPEED_PROMPT];
    m->G = (double)v[GPUPROBE_SPEED_GENERATE];
    m->kv_per_token = r->kv_per_token;
    m->expert_bytes = m->L * 3 * m->h * m->I * r->linear_per_param;
    m->weights = r->weights;
    m->embedding = r->embedding;
    double router = m->E > 1 ? m->h * m->E : 0;
    m->tok_params = m->L * (m->h * (2 * m->q + 2 * m->kvd) + 3 * m->h * m->I * m->k + router) +
                    m->V * m->h;
}

/* Experts of a layer that `tokens` tokens touch, in expectation, each
 * routed to k of E at random: E (1 - (1 - k/E)^tokens); 1 when dense. */
static double experts_touched(const sp_model *m, double tokens)
{
    if (m->E <= 1)
        return 1;
    return m->E * (1 - pow(1 - m->k / m->E, tokens));
}

/* The weights a pass of `tokens` tokens reads: the experts touched, and the
 * embedding matrix only as a tied output head (a lookup reads B rows). */
static double weights_read(const sp_model *m, double tokens)
{
    double idle = m->E > 1 ? (m->E - experts_touched(m, tokens)) * m->expert_bytes : 0;
    return m->weights - idle - (m->tied ? 0 : m->embedding);
}

/* ---- prefill ------------------------------------------------------------- */

/* Keys the causal attention of a P-token prompt multiplies, summed over the
 * queries: sum over i = 1..P of min(i, window). */
static double causal_keys(double P, double window)
{
    if (window <= 0 || P <= window)
        return P * (P + 1) / 2;
    return window * (window + 1) / 2 + (P - window) * window;
}

typedef struct sp_rates {
    double read, dec, mlp, attn; /* effective: measured x efficiency */
    double layer_s;
} sp_rates;

static void prefill(const sp_model *m, const sp_rates *r, gpuprobe_speed *o)
{
    double T = m->P * m->B;
    double router = m->E > 1 ? m->h * m->E : 0;
    double proj = 2 * T * m->L * (m->h * (2 * m->q + 2 * m->kvd) + router);
    double mlp = 2 * T * m->L * 3 * m->h * m->I * m->k;
    double attn = 4 * m->B * m->L * m->q * causal_keys(m->P, m->window);
    double head = 2 * m->B * m->h * m->V;
    o->prefill_flop = proj + mlp + attn + head;
    o->prefill_compute_s = (proj + attn) / r->attn + mlp / r->mlp + head / r->dec;
    o->prefill_flops = o->prefill_flop / o->prefill_compute_s;
    o->prefill_bytes = weights_read(m, T) + T * m->kv_per_token;
    o->prefill_memory_s = o->prefill_bytes / r->read;
    int compute = o->prefill_compute_s >= o->prefill_memory_s;
    o->prefill_bound = compute ? GPUPROBE_SPEED_BOUND_COMPUTE : GPUPROBE_SPEED_BOUND_MEMORY;
    o->prefill_s = (compute ? o->prefill_compute_s : o->prefill_memory_s) + m->L * r->layer_s;
}

/* ---- decode -------------------------------------------------------------- */

/* a + b e: a step's memory or compute time at e keys. */
typedef struct sp_line {
    double a, b;
} sp_line;

/* Sum over the integers e in [lo, hi] of l(e). */
static double series(sp_line l, double lo, double hi)
{
    return hi < lo ? 0 : (hi - lo + 1) * (l.a + l.b * (lo + hi) / 2);
}

/* Sum over the integers e in [lo, hi] of max(mem(e), cmp(e)); *mem_steps
 * counts the e where memory bounds (mem >= cmp). Two lines cross at most
 * once, so memory bounds one end of the range and compute the other. */
static double sum_max(sp_line mem, sp_line cmp, double lo, double hi, double *mem_steps)
{
    if (hi < lo)
        return 0;
    double da = mem.a - cmp.a, db = mem.b - cmp.b; /* mem - cmp = da + db e */
    double mlo = lo, mhi = hi;                      /* where memory bounds */
    if (db == 0) {
        if (da < 0)
            mlo = hi + 1;
    } else if (db > 0) {
        mlo = fmax(lo, ceil(-da / db));
    } else {
        mhi = fmin(hi, floor(-da / db));
    }
    if (mlo > mhi) /* compute bounds every step */
        return series(cmp, lo, hi);
    *mem_steps += mhi - mlo + 1;
    return series(cmp, lo, mlo - 1) + series(mem, mlo, mhi) + series(cmp, mhi + 1, hi);
}

/* One step's time at e keys (no overhead). */
static double step_at(sp_line mem, sp_line cmp, double e)
{
    return fmax(mem.a + mem.b * e, cmp.a + cmp.b * e);
}

static void decode(const sp_model *m, const sp_rates *r, gpuprobe_speed *o)
{
    double w = weights_read(m, m->B);
    sp_line mem = {w / r->read, m->B * m->kv_per_token / r->read};
    sp_line cmp = {2 * m->B * m->tok_params / r->dec, 4 * m->B * m->L * m->q / r->dec};
    /* Steps j = 1 .. G - 1 at context c = P + j: first P + 1, last P + G - 1
     * (with G = 1 no step is made; the figures are those of the next one). */
    double n = m->G - 1, first = m->P + 1, last = m->P + (n > 0 ? n : 1);
    double cap = m->window > 0 ? m->window : last;
    double e_first = fmin(first, cap), e_last = fmin(last, cap);
    double mem_steps = 0, sum = 0, keys = 0;
    if (n > 0) {
        double hi = fmin(last, cap); /* steps below the window: e = c */
        sum = sum_max(mem, cmp, first, hi, &mem_steps);
        keys = hi >= first ? (hi - first + 1) * (first + hi) / 2 : 0;
        double flat = last - fmax(hi, first - 1); /* steps at the window */
        if (flat > 0) {
            sum += flat * step_at(mem, cmp, cap);
            mem_steps += mem.a + mem.b * cap >= cmp.a + cmp.b * cap ? flat : 0;
            keys += flat * cap;
        }
    }
    double e_mean = n > 0 ? keys / n : e_first;
    double over = m->L * r->layer_s;
    o->decode_weight_bytes = w;
    o->decode_bytes_first = w + m->B * m->kv_per_token * e_first;
    o->decode_bytes_last = w + m->B * m->kv_per_token * e_last;
    o->decode_bytes_mean = w + m->B * m->kv_per_token * e_mean;
    o->decode_flop_mean = 2 * m->B * m->tok_params + 4 * m->B * m->L * m->q * e_mean;
    o->decode_step_first_s = step_at(mem, cmp, e_first) + over;
    o->decode_step_last_s = step_at(mem, cmp, e_last) + over;
    o->decode_s = n > 0 ? sum + n * over : 0;
    o->decode_tokens_per_s = n > 0 ? n / o->decode_s : 1 / o->decode_step_first_s;
    o->decode_batch_tokens_per_s = m->B * o->decode_tokens_per_s;
    o->decode_memory_steps = (uint64_t)mem_steps;
    int mem_bound = n > 0 ? 2 * mem_steps >= n
                          : mem.a + mem.b * e_first >= cmp.a + cmp.b * e_first;
    o->decode_bound = mem_bound ? GPUPROBE_SPEED_BOUND_MEMORY : GPUPROBE_SPEED_BOUND_COMPUTE;
    if (m->window > 0 && m->P + m->G - 1 > m->window)
        o->flags |= GPUPROBE_SPEED_WINDOWED;
}

/* ---- public: the estimate -------------------------------------------------- */

static int positive(double x)
{
    return isfinite(x) && x > 0;
}

static gpuprobe_status check_figures(gpuprobe_context *ctx, const char *fn,
                                     const gpuprobe_speed_figures *f)
{
    gpuprobe_status st = GP_CHECK_SIZE(ctx, fn, "fig", f->size, gpuprobe_speed_figures, flags);
    if (st != GPUPROBE_OK)
        return st;
    const char *bad = !positive(f->read_bytes_per_s) ? "read_bytes_per_s"
                      : !positive(f->decode_flops)   ? "decode_flops"
                      : !positive(f->prefill_flops)  ? "prefill_flops"
                      : !(isfinite(f->prefill_attn_flops) && f->prefill_attn_flops >= 0)
                          ? "prefill_attn_flops"
                          : NULL;
    if (bad)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%s: fig->%s must be a positive finite rate", fn, bad);
    return GPUPROBE_OK;
}

static gpuprobe_status check_call(gpuprobe_context *ctx, const char *fn,
                                  const gpuprobe_model *model, const void *out, unsigned flags)
{
    if (!model || !out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       model ? "the output" : "model");
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s: flags must be 0, not 0x%x", fn,
                       flags);
    return GPUPROBE_OK;
}

static void rates_from(const gpuprobe_speed_figures *f, const int64_t *v, sp_rates *r)
{
    double eff = (double)v[GPUPROBE_SPEED_EFFICIENCY] / 100;
    r->read = f->read_bytes_per_s * eff;
    r->dec = f->decode_flops * eff;
    r->mlp = f->prefill_flops * eff;
    r->attn = (f->prefill_attn_flops > 0 ? f->prefill_attn_flops : f->prefill_flops) * eff;
    r->layer_s = (double)v[GPUPROBE_SPEED_LAYER_OVERHEAD_NS] * 1e-9;
}

/* Every figure of the estimate is finite (a rate tiny enough makes a time
 * infinite). */
static int all_finite(const gpuprobe_speed *o)
{
    const double *d = &o->prefill_s;
    for (const double *x = d; x <= &o->total_s; x++)
        if (!isfinite(*x))
            return 0;
    return 1;
}

gpuprobe_status gpuprobe_speed_compute(gpuprobe_context *ctx, const gpuprobe_model *model,
                                       const gpuprobe_plan_options *plan_opts,
                                       const gpuprobe_speed_options *speed_opts,
                                       const gpuprobe_speed_figures *fig, unsigned flags,
                                       gpuprobe_speed *out)
{
    static const char fn[] = "gpuprobe_speed_compute";
    gpuprobe_status st = check_call(ctx, fn, model, out, flags);
    if (st == GPUPROBE_OK && !fig)
        st = gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s: fig is NULL", fn);
    if (st == GPUPROBE_OK)
        st = GP_CHECK_SIZE(ctx, fn, "out", out->size, gpuprobe_speed, flags);
    if (st == GPUPROBE_OK)
        st = check_figures(ctx, fn, fig);
    gp_reads rd;
    if (st != GPUPROBE_OK || (st = gp_plan_reads(ctx, model, plan_opts, &rd)) != GPUPROBE_OK)
        return st;
    int64_t v[GP_SPEED_NPARAMS];
    speed_values(speed_opts, v);
    sp_model m;
    sp_rates r;
    sp_from(&rd, v, &m);
    rates_from(fig, v, &r);
    gpuprobe_speed o;
    memset(&o, 0, sizeof o);
    prefill(&m, &r, &o);
    decode(&m, &r, &o);
    o.read_bytes_per_s = r.read;
    o.decode_flops = r.dec;
    o.layer_overhead_s = r.layer_s;
    o.efficiency = (double)v[GPUPROBE_SPEED_EFFICIENCY] / 100;
    o.total_s = o.prefill_s + o.decode_s;
    o.flags |= rd.gpus > 1 ? GPUPROBE_SPEED_TP_NOT_MODELLED : 0;
    if (!all_finite(&o))
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW,
                       "%s: the estimate is beyond a double (a rate too small for the work)", fn);
    size_t n = out->size < sizeof o ? out->size : sizeof o;
    memcpy((char *)out + sizeof out->size, (const char *)&o + sizeof o.size, n - sizeof o.size);
    return gp_ok(ctx);
}

/* ---- the measurement, kept in the context -------------------------------- */

enum { MEMO_READ = 0, MEMO_MATMUL = 1 };

typedef struct memo_entry {
    size_t device;
    int kind, dtype;
    int64_t m, n, k; /* MEMO_READ: m is the buffer asked, dtype the test */
    int64_t threads; /* CPU threads asked (0: the default) */
    double value;
    int threads_used; /* the run's CPU threads */
} memo_entry;

struct gp_speed_memo {
    size_t n, cap;
    memo_entry *e;
};

void gp_speed_release(struct gp_speed_memo *memo)
{
    if (memo)
        free(memo->e);
    free(memo);
}

static const memo_entry *memo_find(const gpuprobe_context *ctx, const memo_entry *key)
{
    const struct gp_speed_memo *mm = ctx->speed;
    for (size_t i = 0; mm && i < mm->n; i++) {
        const memo_entry *e = &mm->e[i];
        if (e->device == key->device && e->kind == key->kind && e->dtype == key->dtype &&
            e->m == key->m && e->n == key->n && e->k == key->k && e->threads == key->threads)
            return e;
    }
    return NULL;
}

static gpuprobe_status memo_add(gpuprobe_context *ctx, const memo_entry *e)
{
    if (!ctx->speed && !(ctx->speed = calloc(1, sizeof *ctx->speed)))
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "keeping the speed figures");
    struct gp_speed_memo *mm = ctx->speed;
    if (mm->n == mm->cap) {
        size_t cap = mm->cap ? 2 * mm->cap : 8;
        memo_entry *grown = realloc(mm->e, cap * sizeof *grown);
        if (!grown)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "keeping the speed figures");
        mm->e = grown;
        mm->cap = cap;
    }
    mm->e[mm->n++] = *e;
    return GPUPROBE_OK;
}

/* One figure: from the context, or measured and kept there. *measured
 * counts the figures measured; *threads is lowered to the run's CPU
 * threads. */
static gpuprobe_status memo_get(gpuprobe_context *ctx, memo_entry key, int64_t budget_ms,
                                double *value, int *threads, int *measured)
{
    const memo_entry *hit = memo_find(ctx, &key);
    if (!hit) {
        gpuprobe_status st =
            key.kind == MEMO_READ
                ? gp_bandwidth_read(ctx, key.device, (gpuprobe_bandwidth_test)key.dtype,
                                    (uint64_t)key.m, key.threads, &key.value, &key.threads_used)
                : gp_matmul_flops(ctx, key.device, (gpuprobe_dtype)key.dtype, key.m, key.n,
                                  key.k, budget_ms, key.threads, &key.value, &key.threads_used);
        if (st != GPUPROBE_OK || (st = memo_add(ctx, &key)) != GPUPROBE_OK)
            return st;
        (*measured)++;
        hit = &key;
    }
    *value = hit->value;
    if (hit->threads_used < *threads)
        *threads = hit->threads_used;
    return GPUPROBE_OK;
}

/* The dtype the matmuls run in for weights wd on dev. */
static gpuprobe_status matmul_dtype(gpuprobe_context *ctx, const gp_device *dev,
                                    gpuprobe_dtype wd, gpuprobe_dtype *dt, uint32_t *flags)
{
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        /* bf16 on the library's bf16 gemm (AMX tiles or AVX512-BF16) where
         * the CPU has either, as frameworks run it there; else fp32, as
         * they run it elsewhere (docs/speed.md) */
        char why[160];
        *dt = wd == GPUPROBE_DTYPE_FP64                               ? GPUPROBE_DTYPE_FP64
              : wd == GPUPROBE_DTYPE_BF16 && gp_cpu_bf16(ctx, why, sizeof why) ? GPUPROBE_DTYPE_BF16
                                                                      : GPUPROBE_DTYPE_FP32;
    } else if (wd == GPUPROBE_DTYPE_FP64) {
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "fp64 weights: the matmul is not timed in fp64 on %s", dev->spec);
    } else {
        *dt = wd == GPUPROBE_DTYPE_FP32 || wd == GPUPROBE_DTYPE_FP16 || wd == GPUPROBE_DTYPE_TF32
                  ? wd
                  : GPUPROBE_DTYPE_BF16;
    }
    if (*dt != wd)
        *flags |= GPUPROBE_SPEED_DTYPE_SUBSTITUTED;
    return GPUPROBE_OK;
}

/* The four figures of gpuprobe_speed_measure(). */
static gpuprobe_status measure_all(gpuprobe_context *ctx, size_t device, int cpu,
                                   const gp_reads *rd, const int64_t *v, gpuprobe_dtype dt,
                                   gpuprobe_speed_figures *f, int *measured)
{
    const gp_shape *s = &rd->s;
    int64_t rows = (int64_t)rd->batch * v[GPUPROBE_SPEED_PROMPT]; /* <= 2^56 */
    if (rows > v[GPUPROBE_SPEED_MAX_ROWS])
        rows = v[GPUPROBE_SPEED_MAX_ROWS];
    int64_t h = (int64_t)s->hidden, I = (int64_t)s->inter;
    int64_t qkv = (int64_t)(s->q_dim + 2 * s->kv_dim);
    int64_t budget = v[GPUPROBE_SPEED_BUDGET_MS];
    /* A decode reads its weights through matrix-vector products, a block
     * of rows at once: on a CPU the read test with several streams per
     * thread, whose figure such products attain (docs/speed.md). */
    gpuprobe_bandwidth_test rt =
        cpu ? GPUPROBE_BANDWIDTH_TEST_READ_STREAMS : GPUPROBE_BANDWIDTH_TEST_READ;
    int64_t th = cpu ? v[GPUPROBE_SPEED_CPU_THREADS] : 0;
    memo_entry read = {device, MEMO_READ, (int)rt, v[GPUPROBE_SPEED_BUFFER_BYTES], 0, 0, th, 0, 0};
    /* A gemm of a few rows times the packing of B, not the arithmetic (an
     * engine multiplies one token with a matrix-vector product): the
     * decode shape is timed at 16 rows at least. */
    int64_t dec_rows = (int64_t)rd->batch < 16 ? 16 : (int64_t)rd->batch;
    memo_entry dec = {device, MEMO_MATMUL, (int)dt, dec_rows, I, h, th, 0, 0};
    memo_entry mlp = {device, MEMO_MATMUL, (int)dt, rows, I, h, th, 0, 0};
    memo_entry attn = {device, MEMO_MATMUL, (int)dt, rows, qkv, h, th, 0, 0};
    int used = INT32_MAX; /* the fewest threads a figure was measured with */
    gpuprobe_status st;
    if ((st = memo_get(ctx, read, budget, &f->read_bytes_per_s, &used, measured)) != GPUPROBE_OK ||
        (st = memo_get(ctx, dec, budget, &f->decode_flops, &used, measured)) != GPUPROBE_OK ||
        (st = memo_get(ctx, mlp, budget, &f->prefill_flops, &used, measured)) != GPUPROBE_OK ||
        (st = memo_get(ctx, attn, budget, &f->prefill_attn_flops, &used, measured)) != GPUPROBE_OK)
        return st;
    f->cpu_threads = cpu ? used : 0;
    return GPUPROBE_OK;
}

gpuprobe_status gpuprobe_speed_measure(gpuprobe_context *ctx, size_t device,
                                       const gpuprobe_model *model,
                                       const gpuprobe_plan_options *plan_opts,
                                       const gpuprobe_speed_options *speed_opts,
                                       unsigned flags, gpuprobe_speed_figures *fig)
{
    static const char fn[] = "gpuprobe_speed_measure";
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    gpuprobe_status st = check_call(ctx, fn, model, fig, flags);
    if (st == GPUPROBE_OK)
        st = GP_CHECK_SIZE(ctx, fn, "fig", fig->size, gpuprobe_speed_figures, flags);
    gp_reads rd;
    const gp_device *dev = NULL;
    if (st != GPUPROBE_OK || (st = gp_plan_reads(ctx, model, plan_opts, &rd)) != GPUPROBE_OK ||
        (st = gp_get_device(ctx, device, &dev)) != GPUPROBE_OK)
        return st;
    int64_t v[GP_SPEED_NPARAMS];
    speed_values(speed_opts, v);
    gpuprobe_speed_figures f = GPUPROBE_SPEED_FIGURES_INIT;
    gpuprobe_dtype dt = GPUPROBE_DTYPE_FP32;
    int measured = 0;
    if ((st = matmul_dtype(ctx, dev, rd.weights_dtype, &dt, &f.flags)) != GPUPROBE_OK ||
        (st = measure_all(ctx, device, dev->kind == GPUPROBE_DEVICE_CPU, &rd, v, dt, &f,
                            &measured)) != GPUPROBE_OK)
        return st;
    f.dtype = (int32_t)dt;
    f.flags |= measured ? 0 : GPUPROBE_SPEED_CACHED;
    size_t n = fig->size < sizeof f ? fig->size : sizeof f;
    memcpy((char *)fig + sizeof fig->size, (const char *)&f + sizeof f.size, n - sizeof f.size);
    return gp_ok(ctx);
}
