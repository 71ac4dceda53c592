/*
 * plan.c - will this model fit? The workload options, the plan's byte
 * breakdown (pure), the largest context and batch that fit a budget (pure),
 * and the plan held against devices: one device, and the fewest GPUs with
 * tensor parallelism. The formulas and their sources are in gpuprobe.h
 * ("Will this model fit?") and docs/capacity.md; the parameter counts come
 * from model.c.
 *
 * Device memory is read through gp_memory_read() only, and the CUDA
 * context's cost through gp_context_overhead() (memory.c), which the 1.0
 * capacity call shares, so a plan and gpuprobe_device_capacity() never
 * disagree on what a device has.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- options ---------------------------------------------------------- */

#define GP_PLAN_NPARAMS 11

/* A gp_params (params.c), first: gp_params_new() makes one. */
struct gpuprobe_plan_options {
    gp_params p;
};

static const gp_param_info plan_info[GP_PLAN_NPARAMS] = {
    [GPUPROBE_PLAN_WORKLOAD] = {GPUPROBE_WORKLOAD_WEIGHTS, GPUPROBE_WORKLOAD_TRAINING,
                                GPUPROBE_WORKLOAD_INFERENCE},
    [GPUPROBE_PLAN_WEIGHTS_DTYPE] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_INT4,
                                     GPUPROBE_DTYPE_BF16},
    [GPUPROBE_PLAN_KV_DTYPE] = {-1, GPUPROBE_DTYPE_INT4, -1},
    [GPUPROBE_PLAN_CONTEXT] = {0, INT64_C(1) << 32, 4096},
    [GPUPROBE_PLAN_BATCH] = {1, INT64_C(1) << 24, 1},
    [GPUPROBE_PLAN_PREFILL_CHUNK] = {0, INT64_C(1) << 32, 0},
    [GPUPROBE_PLAN_CHECKPOINTING] = {0, 1, 0},
    [GPUPROBE_PLAN_QUANT_GROUP] = {0, INT64_C(1) << 30, 128},
    [GPUPROBE_PLAN_GPUS] = {1, INT64_C(1) << 16, 1},
    [GPUPROBE_PLAN_OVERHEAD] = {-1, INT64_MAX, -1},
    [GPUPROBE_PLAN_MARGIN] = {0, INT64_MAX, INT64_C(1) << 30},
};
_Static_assert(GP_PLAN_NPARAMS <= GP_PARAMS_MAX, "plan options fit a gp_params");
static const gp_param_table plan_table = {plan_info, GP_PLAN_NPARAMS, 0};

gpuprobe_status gpuprobe_plan_options_create(gpuprobe_plan_options **out)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = gp_params_new(sizeof **out, &plan_table);
    return *out ? GPUPROBE_OK : GPUPROBE_ERR_OUT_OF_MEMORY;
}

void gpuprobe_plan_options_destroy(gpuprobe_plan_options *opts)
{
    gp_params_destroy(opts);
}

gpuprobe_status gpuprobe_plan_param_bounds(gpuprobe_plan_param param,
                                           int64_t *lower, int64_t *upper)
{
    return gp_params_bounds(&plan_table, (int)param, lower, upper);
}

gpuprobe_status gpuprobe_plan_options_set(gpuprobe_plan_options *opts,
                                          gpuprobe_plan_param param,
                                          int64_t value)
{
    return gp_params_set(opts ? &opts->p : NULL, (int)param, value);
}

gpuprobe_status gpuprobe_plan_options_get(const gpuprobe_plan_options *opts,
                                          gpuprobe_plan_param param,
                                          int64_t *value)
{
    return gp_params_get(opts ? &opts->p : NULL, (int)param, value);
}

/* ---- the breakdown ---------------------------------------------------- */

/* A model under a workload on one device of tp, ready to be evaluated at
 * any context and batch. */
typedef struct job {
    gp_shape s;
    int64_t o[GP_PLAN_NPARAMS];
    uint64_t overhead;
    gpuprobe_reserve_source source;
} job;

static int is_quantised(gpuprobe_dtype d)
{
    return d == GPUPROBE_DTYPE_FP8 || d == GPUPROBE_DTYPE_INT8 ||
           d == GPUPROBE_DTYPE_INT4;
}

/* Bytes of one activation value: fp64 and fp32 (tf32) weights compute in
 * their own precision, every other dtype in 16 bits. */
static uint64_t compute_bytes(gpuprobe_dtype d)
{
    return d == GPUPROBE_DTYPE_FP64 ? 8
           : (d == GPUPROBE_DTYPE_FP32 || d == GPUPROBE_DTYPE_TF32) ? 4
                                                                     : 2;
}

static gpuprobe_status job_prepare(gpuprobe_context *ctx,
                                   const gpuprobe_model *model,
                                   const gpuprobe_plan_options *opts,
                                   uint64_t tp, job *j)
{
    gp_params defaults;
    if (!opts)
        gp_params_init(&defaults, &plan_table);
    memcpy(j->o, opts ? opts->p.v : defaults.v, sizeof j->o);
    gpuprobe_dtype wd = (gpuprobe_dtype)j->o[GPUPROBE_PLAN_WEIGHTS_DTYPE];
    uint64_t per_param;
    if (j->o[GPUPROBE_PLAN_WORKLOAD] == GPUPROBE_WORKLOAD_TRAINING &&
        gpuprobe_capacity_bytes(1, wd, GPUPROBE_WORKLOAD_TRAINING,
                                &per_param) != GPUPROBE_OK) {
        char list[64];
        gp_format_dtypes(list, sizeof list, GP_DTYPES_TRAINING, " or ");
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "no training rule for %s weights (AdamW mixed "
                       "precision: %s)",
                       gpuprobe_dtype_name(wd), list);
    }
    gpuprobe_status st = gp_model_shape(ctx, model, tp, &j->s);
    if (st != GPUPROBE_OK)
        return st;
    if (j->o[GPUPROBE_PLAN_OVERHEAD] >= 0) {
        j->overhead = (uint64_t)j->o[GPUPROBE_PLAN_OVERHEAD];
        j->source = GPUPROBE_RESERVE_NONE;
    } else {
        j->overhead = GPUPROBE_DEFAULT_CONTEXT_RESERVE;
        j->source = GPUPROBE_RESERVE_DEFAULT;
    }
    return GPUPROBE_OK;
}

/* Weights (and training states), through the 1.0 per-parameter rules. */
static void weights_figures(const job *j, gpuprobe_plan *p)
{
    const gp_shape *s = &j->s;
    const int64_t *o = j->o;
    gpuprobe_dtype wd = (gpuprobe_dtype)o[GPUPROBE_PLAN_WEIGHTS_DTYPE];
    uint64_t n = s->linear + s->other; /* <= params <= 10^15 */
    if (o[GPUPROBE_PLAN_WORKLOAD] == GPUPROBE_WORKLOAD_TRAINING) {
        uint64_t states = 0;
        (void)gpuprobe_capacity_bytes(n, wd, GPUPROBE_WORKLOAD_WEIGHTS, &p->weights_bytes);
        (void)gpuprobe_capacity_bytes(n, wd, GPUPROBE_WORKLOAD_TRAINING, &states);
        p->gradient_bytes = p->weights_bytes;
        p->optimizer_bytes = states - 2 * p->weights_bytes;
    } else if (is_quantised(wd)) {
        uint64_t lin = 0, group = (uint64_t)o[GPUPROBE_PLAN_QUANT_GROUP];
        (void)gpuprobe_capacity_bytes(s->linear, wd, GPUPROBE_WORKLOAD_WEIGHTS, &lin);
        uint64_t scales = group ? 2 * (s->linear / group + (s->linear % group != 0)) : 0;
        p->weights_bytes = lin + scales + 2 * s->other;
    } else {
        (void)gpuprobe_capacity_bytes(n, wd, GPUPROBE_WORKLOAD_WEIGHTS, &p->weights_bytes);
    }
}

/* Inference: the KV cache of batch x context tokens (the window's when it
 * is shorter) and the activations of one prefill step. NULL, or the figure
 * that overflowed. */
static const char *inference_figures(const job *j, uint64_t context, uint64_t batch,
                                     uint64_t a, gpuprobe_plan *p, int *ovf)
{
    const gp_shape *s = &j->s;
    uint64_t cached = context;
    if (s->window && s->window < context) {
        cached = s->window;
        p->flags |= GPUPROBE_PLAN_WINDOWED;
    }
    p->kv_cache_bytes = gp_mul(gp_mul(batch, cached, ovf), p->kv_bytes_per_token, ovf);
    if (*ovf)
        return "the KV cache";
    uint64_t mlp = gp_mul(gp_mul(3, s->routed, ovf), s->inter, ovf);
    uint64_t chunk = (uint64_t)j->o[GPUPROBE_PLAN_PREFILL_CHUNK];
    uint64_t step = chunk && chunk < context ? chunk : context;
    uint64_t attn = gp_add(gp_mul(4, s->q_dim, ovf), gp_mul(2, s->kv_dim, ovf), ovf);
    uint64_t width = gp_add(gp_mul(2, s->hidden, ovf), attn > mlp ? attn : mlp, ovf);
    uint64_t tokens = gp_mul(batch, step, ovf);
    p->activation_bytes = gp_add(gp_mul(gp_mul(a, tokens, ovf), width, ovf),
                                 gp_mul(gp_mul(batch, s->vocab, ovf), 4, ovf), ovf);
    return *ovf ? "the activations" : NULL;
}

/* Training: the activations kept for the backward pass (every layer's, or
 * with checkpointing one per layer plus one layer's), and the logits. */
static void training_figures(const job *j, uint64_t context, uint64_t batch, uint64_t a,
                             gpuprobe_plan *p, int *ovf)
{
    const gp_shape *s = &j->s;
    uint64_t h = s->hidden;
    uint64_t mlp = gp_mul(gp_mul(3, s->routed, ovf), s->inter, ovf);
    uint64_t tokens = gp_mul(batch, context, ovf);
    uint64_t per_layer = gp_add(gp_add(gp_mul(4, h, ovf), gp_mul(2, s->q_dim, ovf), ovf),
                                gp_add(gp_mul(2, s->kv_dim, ovf), mlp, ovf), ovf);
    uint64_t layer = gp_mul(gp_mul(a, tokens, ovf), per_layer, ovf);
    uint64_t logits = gp_mul(gp_mul(tokens, s->vocab, ovf), a + 4, ovf);
    uint64_t kept = j->o[GPUPROBE_PLAN_CHECKPOINTING]
                        ? gp_add(gp_mul(gp_mul(s->layers, gp_mul(a, tokens, ovf), ovf), h, ovf),
                                 layer, ovf)
                        : gp_mul(s->layers, layer, ovf);
    p->activation_bytes = gp_add(kept, logits, ovf);
}

/* The plan at this context and batch. On overflow, *what names the figure. */
static gpuprobe_status job_eval(const job *j, uint64_t context, uint64_t batch,
                                gpuprobe_plan *p, const char **what)
{
    const gp_shape *s = &j->s;
    const int64_t *o = j->o;
    gpuprobe_dtype wd = (gpuprobe_dtype)o[GPUPROBE_PLAN_WEIGHTS_DTYPE];
    gpuprobe_workload wl = (gpuprobe_workload)o[GPUPROBE_PLAN_WORKLOAD];
    uint64_t a = compute_bytes(wd);
    gpuprobe_dtype kd = o[GPUPROBE_PLAN_KV_DTYPE] >= 0
                            ? (gpuprobe_dtype)o[GPUPROBE_PLAN_KV_DTYPE]
                        : a == 8 ? GPUPROBE_DTYPE_FP64
                        : a == 4 ? GPUPROBE_DTYPE_FP32
                                 : GPUPROBE_DTYPE_BF16;
    int ovf = 0;

    memset(p, 0, sizeof *p);
    p->params = s->params;
    p->active_params = s->active;
    p->flags = s->arch ? 0 : GPUPROBE_PLAN_BY_PARAMS;
    weights_figures(j, p);

    if (!s->arch) {
        /* A parameter count alone: the 1.0 inference rule's 20%. */
        if (wl == GPUPROBE_WORKLOAD_INFERENCE)
            p->activation_bytes = p->weights_bytes / 5 + (p->weights_bytes % 5 != 0);
    } else {
        p->kv_bytes_per_token = gp_mul(gp_mul(s->layers, s->kv_dim, &ovf),
                                       gp_dtype_half_bytes(kd), &ovf);
        const char *bad = NULL;
        if (wl == GPUPROBE_WORKLOAD_INFERENCE)
            bad = inference_figures(j, context, batch, a, p, &ovf);
        else if (wl == GPUPROBE_WORKLOAD_TRAINING)
            training_figures(j, context, batch, a, p, &ovf);
        if (bad || ovf) {
            *what = bad ? bad : "the activations";
            return GPUPROBE_ERR_OVERFLOW;
        }
    }

    p->overhead_bytes = j->overhead;
    p->overhead_source = (uint32_t)j->source;
    p->margin_bytes = (uint64_t)o[GPUPROBE_PLAN_MARGIN];
    uint64_t t = gp_add(p->weights_bytes, p->gradient_bytes, &ovf);
    t = gp_add(t, p->optimizer_bytes, &ovf);
    t = gp_add(t, p->kv_cache_bytes, &ovf);
    t = gp_add(t, p->activation_bytes, &ovf);
    t = gp_add(t, p->overhead_bytes, &ovf);
    p->total_bytes = gp_add(t, p->margin_bytes, &ovf);
    if (ovf) {
        *what = "the total";
        return GPUPROBE_ERR_OVERFLOW;
    }
    return GPUPROBE_OK;
}

static gpuprobe_status job_eval_at(gpuprobe_context *ctx, const job *j,
                                   gpuprobe_plan *p)
{
    const char *what = "";
    gpuprobe_status st = job_eval(j, (uint64_t)j->o[GPUPROBE_PLAN_CONTEXT],
                                  (uint64_t)j->o[GPUPROBE_PLAN_BATCH], p, &what);
    if (st == GPUPROBE_ERR_OVERFLOW)
        return gp_fail(ctx, st,
                       "%s of %lld sequences x %lld tokens exceed 2^64 bytes",
                       what, (long long)j->o[GPUPROBE_PLAN_BATCH],
                       (long long)j->o[GPUPROBE_PLAN_CONTEXT]);
    return st;
}

/* Largest value of CONTEXT or BATCH whose total fits budget. The total is
 * non-decreasing in both, so a binary search is exact; an overflow at a
 * large value means "does not fit". */
static gpuprobe_status job_largest(gpuprobe_context *ctx, const job *j,
                                   gpuprobe_plan_param param, uint64_t budget,
                                   uint64_t *largest)
{
    if (!j->s.arch)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "a parameter count alone does not say how memory grows "
                       "with the context or the batch: give the architecture");
    uint64_t lo = 0, hi = (uint64_t)plan_info[param].upper;
    uint64_t ctxlen = (uint64_t)j->o[GPUPROBE_PLAN_CONTEXT];
    uint64_t batch = (uint64_t)j->o[GPUPROBE_PLAN_BATCH];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        gpuprobe_plan p;
        const char *what;
        gpuprobe_status st =
            param == GPUPROBE_PLAN_CONTEXT ? job_eval(j, mid, batch, &p, &what)
                                           : job_eval(j, ctxlen, mid, &p, &what);
        if (st == GPUPROBE_OK && p.total_bytes <= budget)
            lo = mid;
        else /* too large, or overflowing (job_eval's only failure) */
            hi = mid - 1;
    }
    *largest = lo;
    return GPUPROBE_OK;
}

/* ---- public: pure ------------------------------------------------------ */

/* Copy a plan into the caller's struct, no further than its size. */
static void put_plan(gpuprobe_plan *out, const gpuprobe_plan *p)
{
    size_t n = out->size < sizeof *p ? out->size : sizeof *p;
    memcpy((char *)out + sizeof out->size, (const char *)p + sizeof p->size,
           n - sizeof out->size);
}

static gpuprobe_status check_args(gpuprobe_context *ctx, const char *fn,
                                  const gpuprobe_model *model,
                                  const gpuprobe_plan *out, unsigned flags)
{
    if (!model || !out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s: %s is NULL",
                       fn, model ? "out" : "model");
    /* The 1.1 struct ends with flags. */
    gpuprobe_status st = GP_CHECK_SIZE(ctx, fn, "out", out->size, gpuprobe_plan, flags);
    if (st != GPUPROBE_OK)
        return st;
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%s: flags must be 0, not 0x%x", fn, flags);
    return GPUPROBE_OK;
}

/* The plan with no device: one GPU's share of opts's tensor-parallel
 * group (the whole model without one). */
static gpuprobe_status pure_plan(gpuprobe_context *ctx, const gpuprobe_model *model,
                                 const gpuprobe_plan_options *opts, gpuprobe_plan *p)
{
    job j;
    uint64_t tp = opts ? (uint64_t)opts->p.v[GPUPROBE_PLAN_GPUS] : 1;
    gpuprobe_status st = job_prepare(ctx, model, opts, tp, &j);
    return st == GPUPROBE_OK ? job_eval_at(ctx, &j, p) : st;
}

gpuprobe_status gp_plan_check(gpuprobe_context *ctx, const gpuprobe_model *model,
                              const gpuprobe_plan_options *opts)
{
    gpuprobe_plan p;
    return pure_plan(ctx, model, opts, &p);
}

gpuprobe_status gpuprobe_plan_compute(gpuprobe_context *ctx,
                                      const gpuprobe_model *model,
                                      const gpuprobe_plan_options *opts,
                                      unsigned flags, gpuprobe_plan *out)
{
    gpuprobe_status st = check_args(ctx, "gpuprobe_plan_compute", model, out, flags);
    if (st != GPUPROBE_OK)
        return st;
    gpuprobe_plan p;
    if ((st = pure_plan(ctx, model, opts, &p)) != GPUPROBE_OK)
        return st;
    p.size = out->size;
    put_plan(out, &p);
    return gp_ok(ctx);
}

gpuprobe_status gpuprobe_plan_largest(gpuprobe_context *ctx,
                                      const gpuprobe_model *model,
                                      const gpuprobe_plan_options *opts,
                                      gpuprobe_plan_param param,
                                      uint64_t budget_bytes, uint64_t *largest)
{
    if (!model || !largest)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_plan_largest: %s is NULL",
                       model ? "largest" : "model");
    if (param != GPUPROBE_PLAN_CONTEXT && param != GPUPROBE_PLAN_BATCH)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_plan_largest: parameter %d is neither "
                       "GPUPROBE_PLAN_CONTEXT nor GPUPROBE_PLAN_BATCH",
                       (int)param);
    job j;
    uint64_t tp = opts ? (uint64_t)opts->p.v[GPUPROBE_PLAN_GPUS] : 1;
    gpuprobe_status st = job_prepare(ctx, model, opts, tp, &j);
    if (st == GPUPROBE_OK)
        st = job_largest(ctx, &j, param, budget_bytes, largest);
    return st == GPUPROBE_OK ? gp_ok(ctx) : st;
}

/* ---- public: against devices ------------------------------------------ */

/* Prepare j for device dev with memory mem: its own overhead unless the
 * workload sets one. */
static void device_overhead(job *j, const gp_device *dev, const gp_memory *mem)
{
    if (j->o[GPUPROBE_PLAN_OVERHEAD] < 0)
        j->overhead = gp_context_overhead(dev, mem, &j->source);
}

/* The job of the model on dev: one GPU's share of a tensor-parallel group
 * when opts asks for one, the whole model on the CPU. */
static gpuprobe_status job_on(gpuprobe_context *ctx, const gp_device *dev,
                              const gpuprobe_model *model, const gpuprobe_plan_options *opts,
                              job *j)
{
    uint64_t tp = opts && dev->kind != GPUPROBE_DEVICE_CPU
                      ? (uint64_t)opts->p.v[GPUPROBE_PLAN_GPUS] : 1;
    return job_prepare(ctx, model, opts, tp, j);
}

/* The plan of job j on dev with memory mem: its figures, what allocations
 * can get there, whether it fits; with largest, the largest context and
 * batch too. No message on success. */
static gpuprobe_status plan_on(gpuprobe_context *ctx, const gp_device *dev,
                               const gp_memory *mem, job *j, int largest, gpuprobe_plan *p)
{
    device_overhead(j, dev, mem);
    gpuprobe_status st = job_eval_at(ctx, j, p);
    if (st != GPUPROBE_OK)
        return st;
    p->available_bytes = gp_alloc_room(dev, mem, 0);
    p->fits = p->total_bytes <= p->available_bytes;
    if (largest && j->s.arch &&
        ((st = job_largest(ctx, j, GPUPROBE_PLAN_CONTEXT, p->available_bytes,
                           &p->largest_context)) != GPUPROBE_OK ||
         (st = job_largest(ctx, j, GPUPROBE_PLAN_BATCH, p->available_bytes,
                           &p->largest_batch)) != GPUPROBE_OK))
        return st;
    return GPUPROBE_OK;
}

gpuprobe_status gp_plan_on(gpuprobe_context *ctx, const gp_device *dev, const gp_memory *mem,
                           const gpuprobe_model *model, const gpuprobe_plan_options *opts,
                           gpuprobe_plan *p)
{
    job j;
    gpuprobe_status st = job_on(ctx, dev, model, opts, &j);
    return st == GPUPROBE_OK ? plan_on(ctx, dev, mem, &j, 0, p) : st;
}

gpuprobe_status gpuprobe_plan_device(gpuprobe_context *ctx, size_t device,
                                     const gpuprobe_model *model,
                                     const gpuprobe_plan_options *opts,
                                     unsigned flags, gpuprobe_plan *out)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    gpuprobe_status st = check_args(ctx, "gpuprobe_plan_device", model, out, flags);
    if (st != GPUPROBE_OK)
        return st;
    const gp_device *dev = NULL;
    job j;
    gp_memory mem;
    gpuprobe_plan p;
    if ((st = gp_get_device(ctx, device, &dev)) != GPUPROBE_OK ||
        (st = job_on(ctx, dev, model, opts, &j)) != GPUPROBE_OK ||
        (st = gp_memory_read(ctx, device, 0, &mem)) != GPUPROBE_OK ||
        (st = plan_on(ctx, dev, &mem, &j, 1, &p)) != GPUPROBE_OK)
        return st;
    p.size = out->size;
    put_plan(out, &p);
    return gp_ok(ctx);
}

/* The GPUs a tensor-parallel plan may use: what allocations can get on
 * each and its overhead, read once, and their ranking by that room (ties:
 * lower index). */
typedef struct gpu_pool {
    size_t n;
    uint64_t *avail, *over;
    size_t *rank, *pick;      /* pick: room for the chosen ones */
} gpu_pool;

static gpuprobe_status pool_read(gpuprobe_context *ctx, job *j, gpu_pool *g)
{
    g->n = ctx->ndevices - 1;
    g->avail = calloc(g->n, 2 * sizeof *g->avail);
    g->rank = calloc(g->n, 2 * sizeof *g->rank);
    if (!g->avail || !g->rank)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "gpuprobe_plan_gpus: out of memory for %zu devices", g->n);
    g->over = g->avail + g->n;
    g->pick = g->rank + g->n;
    for (size_t i = 0; i < g->n; i++) {
        gp_memory mem;
        gpuprobe_status st = gp_memory_read(ctx, i + 1, 0, &mem);
        if (st != GPUPROBE_OK)
            return st;
        g->avail[i] = gp_alloc_room(&ctx->devices[i + 1], &mem, 0);
        device_overhead(j, &ctx->devices[i + 1], &mem);
        g->over[i] = j->overhead;
        size_t k = i; /* insertion sort: a handful of GPUs */
        for (; k > 0 && g->avail[g->rank[k - 1]] < g->avail[i]; k--)
            g->rank[k] = g->rank[k - 1];
        g->rank[k] = i;
    }
    return GPUPROBE_OK;
}

/* The model split over t GPUs: one GPU's share in *share (0 when it cannot
 * be split so, or overflows), and the t GPUs with the most room
 * that have room for a share and their own overhead in g->pick, in index
 * order; the count of those with room. */
static size_t pool_fit(const gpuprobe_model *model, job *j, gpu_pool *g, uint64_t t,
                       uint64_t *share)
{
    gpuprobe_plan p;
    const char *what;
    *share = 0;
    if (gp_model_shape(NULL, model, t, &j->s) != GPUPROBE_OK)
        return 0; /* the heads cannot be split over t GPUs */
    j->overhead = 0;
    if (job_eval(j, (uint64_t)j->o[GPUPROBE_PLAN_CONTEXT], (uint64_t)j->o[GPUPROBE_PLAN_BATCH],
                 &p, &what) != GPUPROBE_OK)
        return 0; /* overflow: a share this large fits nowhere */
    *share = p.total_bytes;
    size_t fit = 0;
    for (size_t r = 0; r < g->n && fit < t; r++) {
        int ovf = 0;
        uint64_t need = gp_add(p.total_bytes, g->over[g->rank[r]], &ovf);
        if (!ovf && need <= g->avail[g->rank[r]])
            g->pick[fit++] = g->rank[r];
    }
    for (size_t a = 1; a < fit; a++) /* index order */
        for (size_t b = a; b > 0 && g->pick[b - 1] > g->pick[b]; b--) {
            size_t x = g->pick[b];
            g->pick[b] = g->pick[b - 1];
            g->pick[b - 1] = x;
        }
    return fit;
}

/* The fewest GPUs that hold the model, from one up. */
static gpuprobe_status pool_plan(gpuprobe_context *ctx, const gpuprobe_model *model, job *j,
                                 gpu_pool *g, size_t *count, size_t *devices,
                                 size_t max_devices)
{
    uint64_t need_one = 0, need_all = 0;
    size_t room_all = 0;
    for (uint64_t t = 1; t <= g->n; t++) {
        uint64_t share = 0;
        size_t fit = pool_fit(model, j, g, t, &share);
        if (share == 0)
            continue;
        if (t == 1)
            need_one = share;
        need_all = share;
        room_all = fit;
        if (fit < t)
            continue;
        *count = fit;
        for (size_t i = 0; devices && i < fit && i < max_devices; i++)
            devices[i] = g->pick[i] + 1;
        return gp_ok(ctx);
    }
    return gp_fail(ctx, GPUPROBE_ERR_NO_FIT,
                   "no number of the %zu CUDA devices holds the model: one "
                   "GPU needs %llu bytes plus its overhead, and the most "
                   "room for allocations is %llu bytes (%s); over %zu GPUs each needs %llu "
                   "bytes plus overhead, and %zu have room",
                   g->n, (unsigned long long)need_one,
                   (unsigned long long)g->avail[g->rank[0]],
                   ctx->devices[g->rank[0] + 1].spec, g->n,
                   (unsigned long long)need_all, room_all);
}

gpuprobe_status gpuprobe_plan_gpus(gpuprobe_context *ctx,
                                   const gpuprobe_model *model,
                                   const gpuprobe_plan_options *opts,
                                   unsigned flags, size_t *count,
                                   size_t *devices, size_t max_devices)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!model || !count)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_plan_gpus: %s is NULL", model ? "count" : "model");
    if (flags != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_plan_gpus: flags must be 0, not 0x%x", flags);
    job j;
    gpuprobe_status st = job_prepare(ctx, model, opts, 1, &j); /* model errors first */
    if (st != GPUPROBE_OK || (st = gp_enumerate(ctx)) != GPUPROBE_OK)
        return st;
    if (ctx->cuda_cause != GPUPROBE_CUDA_AVAILABLE || ctx->ndevices < 2)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "CUDA is not usable: %s (%s)",
                       gpuprobe_cuda_cause_string(ctx->cuda_cause),
                       ctx->cuda_detail);
    gpu_pool g;
    memset(&g, 0, sizeof g);
    st = pool_read(ctx, &j, &g);
    if (st == GPUPROBE_OK)
        st = pool_plan(ctx, model, &j, &g, count, devices, max_devices);
    free(g.avail);
    free(g.rank);
    return st;
}

/* ---- what a step reads (the speed estimate) ------------------------------ */

gpuprobe_status gp_plan_reads(gpuprobe_context *ctx, const gpuprobe_model *model,
                              const gpuprobe_plan_options *opts, gp_reads *out)
{
    job j;
    gpuprobe_plan p;
    const char *what = "";
    uint64_t tp = opts ? (uint64_t)opts->p.v[GPUPROBE_PLAN_GPUS] : 1;
    gpuprobe_status st = job_prepare(ctx, model, opts, tp, &j);
    if (st != GPUPROBE_OK)
        return st;
    if (!j.s.arch)
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "a parameter count alone has no shapes to time: give the "
                       "architecture");
    j.o[GPUPROBE_PLAN_WORKLOAD] = GPUPROBE_WORKLOAD_INFERENCE;
    if (job_eval(&j, 1, 1, &p, &what) != GPUPROBE_OK)
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW, "%s of one token exceed 2^64 bytes", what);
    gpuprobe_dtype wd = (gpuprobe_dtype)j.o[GPUPROBE_PLAN_WEIGHTS_DTYPE];
    double elem = gp_dtype_half_bytes(wd) / 2.0;
    uint64_t group = (uint64_t)j.o[GPUPROBE_PLAN_QUANT_GROUP];
    memset(out, 0, sizeof *out);
    out->s = j.s;
    out->weights = (double)p.weights_bytes;
    out->linear_per_param = elem + (is_quantised(wd) && group ? 2.0 / (double)group : 0.0);
    out->embedding = (double)j.s.vocab * (double)j.s.hidden * (is_quantised(wd) ? 2.0 : elem);
    out->kv_per_token = (double)p.kv_bytes_per_token;
    out->batch = (uint64_t)j.o[GPUPROBE_PLAN_BATCH];
    out->gpus = tp;
    out->weights_dtype = wd;
    return GPUPROBE_OK;
}
