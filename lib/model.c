/*
 * model.c - the model description (gpuprobe_model): a parameter count or an
 * architecture, set by key, and the parameter counts and per-device
 * dimensions derived from it (gp_model_shape()). Pure arithmetic: nothing
 * here looks at a device.
 *
 * Parameter count of an architecture (gated MLP and RMSNorm, as Llama,
 * Mistral, Mixtral and Qwen2), on one GPU of t sharing it by tensor
 * parallelism (t = 1: the whole model):
 *
 *   per layer  q, o      2 h (H/t) d          k, v   2 h (K/t) d
 *              biases    (H/t) d + 2 (K/t) d   when the model has them
 *              experts   E 3 h ceil(I/t)       router h E   when E > 1
 *              norms     2 h
 *   once       embedding ceil(V/t) h,  output head the same unless tied,
 *              final norm h
 *
 * K/t is 1 when t is a multiple of K (the KV heads are then replicated).
 * "linear" counts the projection and expert matrices, which quantised
 * formats store in few bits; "other" counts the rest, which they keep in
 * 16 bits. Active parameters count k routed experts instead of E.
 *
 * Every product and sum is checked (gp_mul/gp_add): a figure beyond 64 bits
 * or a count beyond GPUPROBE_MAX_PARAMS is GPUPROBE_ERR_OVERFLOW.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define GP_MODEL_NPARAMS 13

/* A gp_params (params.c), first: gp_params_new() makes one. */
struct gpuprobe_model {
    gp_params p;
};

/* Upper bounds: far beyond any published model, low enough that a typo
 * (10^12 layers) is refused at once. 0 ("not given", every default) is
 * always accepted. */
static const gp_param_info model_info[GP_MODEL_NPARAMS] = {
    [GPUPROBE_MODEL_PARAMS] = {1, (int64_t)GPUPROBE_MAX_PARAMS, 0},
    [GPUPROBE_MODEL_LAYERS] = {1, INT64_C(1) << 20, 0},
    [GPUPROBE_MODEL_HIDDEN] = {1, INT64_C(1) << 24, 0},
    [GPUPROBE_MODEL_HEADS] = {1, INT64_C(1) << 20, 0},
    [GPUPROBE_MODEL_KV_HEADS] = {1, INT64_C(1) << 20, 0},
    [GPUPROBE_MODEL_HEAD_DIM] = {1, INT64_C(1) << 20, 0},
    [GPUPROBE_MODEL_INTERMEDIATE] = {1, INT64_C(1) << 26, 0},
    [GPUPROBE_MODEL_VOCAB] = {1, INT64_C(1) << 26, 0},
    [GPUPROBE_MODEL_TIED_EMBEDDINGS] = {1, 1, 0},
    [GPUPROBE_MODEL_EXPERTS] = {1, INT64_C(1) << 16, 0},
    [GPUPROBE_MODEL_EXPERTS_PER_TOKEN] = {1, INT64_C(1) << 16, 0},
    [GPUPROBE_MODEL_SLIDING_WINDOW] = {1, INT64_C(1) << 32, 0},
    [GPUPROBE_MODEL_QKV_BIAS] = {1, 1, 0},
};
_Static_assert(GP_MODEL_NPARAMS <= GP_PARAMS_MAX, "a model fits a gp_params");
static const gp_param_table model_table = {model_info, GP_MODEL_NPARAMS, 1};

/* What the messages call the keys an architecture needs. */
static const char *const model_words[GP_MODEL_NPARAMS] = {
    [GPUPROBE_MODEL_LAYERS] = "layers",
    [GPUPROBE_MODEL_HIDDEN] = "hidden size",
    [GPUPROBE_MODEL_HEADS] = "attention heads",
    [GPUPROBE_MODEL_INTERMEDIATE] = "intermediate size",
    [GPUPROBE_MODEL_VOCAB] = "vocabulary size",
};

gpuprobe_status gpuprobe_model_create(gpuprobe_model **out)
{
    if (!out)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *out = gp_params_new(sizeof **out, &model_table);
    return *out ? GPUPROBE_OK : GPUPROBE_ERR_OUT_OF_MEMORY;
}

void gpuprobe_model_destroy(gpuprobe_model *model)
{
    gp_params_destroy(model);
}

gpuprobe_status gpuprobe_model_param_bounds(gpuprobe_model_param param,
                                            int64_t *lower, int64_t *upper)
{
    return gp_params_bounds(&model_table, (int)param, lower, upper);
}

gpuprobe_status gpuprobe_model_set(gpuprobe_model *model,
                                   gpuprobe_model_param param, int64_t value)
{
    return gp_params_set(model ? &model->p : NULL, (int)param, value);
}

/* KV heads are the attention heads, and the head dimension hidden / heads
 * (when it divides), until they are given. */
gpuprobe_status gpuprobe_model_get(const gpuprobe_model *model,
                                   gpuprobe_model_param param, int64_t *value)
{
    gpuprobe_status st = gp_params_get(model ? &model->p : NULL, (int)param, value);
    if (st != GPUPROBE_OK || *value != 0)
        return st;
    const int64_t *v = model->p.v;
    if (param == GPUPROBE_MODEL_KV_HEADS)
        *value = v[GPUPROBE_MODEL_HEADS];
    if (param == GPUPROBE_MODEL_HEAD_DIM && v[GPUPROBE_MODEL_HEADS] &&
        v[GPUPROBE_MODEL_HIDDEN] % v[GPUPROBE_MODEL_HEADS] == 0)
        *value = v[GPUPROBE_MODEL_HIDDEN] / v[GPUPROBE_MODEL_HEADS];
    return GPUPROBE_OK;
}

/* Parameters of one layer stack plus embeddings on one GPU of tp, with
 * `experts` expert MLPs per layer (E for the stored total, k for the
 * active count). */
static void count(const gp_shape *s, uint64_t experts, uint64_t router,
                  uint64_t qkv_bias, uint64_t tied, uint64_t *linear,
                  uint64_t *other, int *ovf)
{
    uint64_t h = s->hidden;
    uint64_t attn = gp_mul(gp_mul(2, h, ovf), gp_add(s->q_dim, s->kv_dim, ovf), ovf);
    uint64_t mlp = gp_mul(gp_mul(gp_mul(3, h, ovf), s->inter, ovf), experts, ovf);
    uint64_t bias = qkv_bias ? gp_add(s->q_dim, gp_mul(2, s->kv_dim, ovf), ovf) : 0;
    uint64_t rest = gp_add(gp_add(bias, gp_mul(h, router, ovf), ovf),
                           gp_mul(2, h, ovf), ovf);
    uint64_t emb = gp_mul(s->vocab, h, ovf);
    *linear = gp_mul(s->layers, gp_add(attn, mlp, ovf), ovf);
    *other = gp_add(gp_add(gp_mul(s->layers, rest, ovf), emb, ovf),
                    gp_add(tied ? 0 : emb, h, ovf), ovf);
}

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* An architecture names at least its layers, hidden size, heads,
 * intermediate size and vocabulary. */
static gpuprobe_status check_complete(gpuprobe_context *ctx, const int64_t *v)
{
    static const gpuprobe_model_param required[] = {
        GPUPROBE_MODEL_LAYERS, GPUPROBE_MODEL_HIDDEN, GPUPROBE_MODEL_HEADS,
        GPUPROBE_MODEL_INTERMEDIATE, GPUPROBE_MODEL_VOCAB};
    char missing[160] = "";
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (v[required[i]])
            continue;
        size_t n = strlen(missing);
        gp_snprintf(missing + n, sizeof missing - n, "%s%s", n ? ", " : "",
                    model_words[required[i]]);
    }
    if (missing[0])
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "the architecture is incomplete: no %s given", missing);
    return GPUPROBE_OK;
}

/* Heads, experts and the split over tp GPUs must agree; *head_dim gets the
 * head dimension (given, or hidden / heads). */
static gpuprobe_status check_heads(gpuprobe_context *ctx, const int64_t *v, uint64_t tp,
                                   long long *head_dim)
{
    long long H = v[GPUPROBE_MODEL_HEADS];
    long long K = v[GPUPROBE_MODEL_KV_HEADS] ? v[GPUPROBE_MODEL_KV_HEADS] : H;
    long long h = v[GPUPROBE_MODEL_HIDDEN];
    long long E = v[GPUPROBE_MODEL_EXPERTS];
    long long k = v[GPUPROBE_MODEL_EXPERTS_PER_TOKEN];
    if (K > H || H % K != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%lld KV heads do not divide %lld attention heads", K, H);
    long long d = v[GPUPROBE_MODEL_HEAD_DIM];
    if (!d && h % H != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "hidden size %lld is not a multiple of the %lld "
                       "attention heads (give the head dimension if the model "
                       "has its own)",
                       h, H);
    *head_dim = d ? d : h / H;
    if (E > 1 && k == 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%lld experts but no experts per token given", E);
    if (E > 1 && k > E)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%lld experts per token, but only %lld experts", k, E);
    if (E <= 1 && k > 1)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%lld experts per token, but the model has no experts",
                       k);
    if ((uint64_t)H % tp != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%lld attention heads cannot be split over %llu GPUs",
                       H, (unsigned long long)tp);
    if ((uint64_t)K % tp != 0 && tp % (uint64_t)K != 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%lld KV heads can be neither split over nor "
                       "replicated on %llu GPUs",
                       K, (unsigned long long)tp);
    return GPUPROBE_OK;
}

/* A checked architecture's counts: the whole model, then one GPU's share. */
static gpuprobe_status arch_shape(gpuprobe_context *ctx, const int64_t *v, uint64_t tp,
                                  long long d, gp_shape *s)
{
    long long H = v[GPUPROBE_MODEL_HEADS];
    long long K = v[GPUPROBE_MODEL_KV_HEADS] ? v[GPUPROBE_MODEL_KV_HEADS] : H;
    long long E = v[GPUPROBE_MODEL_EXPERTS];
    uint64_t experts = E > 1 ? (uint64_t)E : 1;
    uint64_t routed = E > 1 ? (uint64_t)v[GPUPROBE_MODEL_EXPERTS_PER_TOKEN] : 1;
    uint64_t router = E > 1 ? (uint64_t)E : 0;
    uint64_t bias = v[GPUPROBE_MODEL_QKV_BIAS] != 0;
    uint64_t tied = v[GPUPROBE_MODEL_TIED_EMBEDDINGS] != 0;
    int ovf = 0;

    s->arch = 1;
    s->layers = (uint64_t)v[GPUPROBE_MODEL_LAYERS];
    s->hidden = (uint64_t)v[GPUPROBE_MODEL_HIDDEN];
    s->routed = routed;
    s->experts = experts;
    s->tied = tied;
    s->window = (uint64_t)v[GPUPROBE_MODEL_SLIDING_WINDOW];

    /* The whole model first: total and active counts. */
    s->q_dim = gp_mul((uint64_t)H, (uint64_t)d, &ovf);
    s->kv_dim = gp_mul((uint64_t)K, (uint64_t)d, &ovf);
    s->inter = (uint64_t)v[GPUPROBE_MODEL_INTERMEDIATE];
    s->vocab = (uint64_t)v[GPUPROBE_MODEL_VOCAB];
    uint64_t lin, oth;
    count(s, experts, router, bias, tied, &lin, &oth, &ovf);
    s->params = gp_add(lin, oth, &ovf);
    count(s, routed, router, bias, tied, &lin, &oth, &ovf);
    s->active = gp_add(lin, oth, &ovf);
    if (ovf)
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW,
                       "the architecture's parameter count exceeds 2^64");
    if (s->params > GPUPROBE_MAX_PARAMS)
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW,
                       "the architecture has %llu parameters, more than "
                       "GPUPROBE_MAX_PARAMS (10^15)",
                       (unsigned long long)s->params);

    /* Then one GPU's share. Every figure is at most the whole model's. */
    s->q_dim = (uint64_t)(H / (long long)tp) * (uint64_t)d;
    s->kv_dim = ((uint64_t)K % tp == 0 ? (uint64_t)K / tp : 1) * (uint64_t)d;
    s->inter = div_ceil(s->inter, tp);
    s->vocab = div_ceil(s->vocab, tp);
    count(s, experts, router, bias, tied, &s->linear, &s->other, &ovf);
    if (ovf)
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL,
                       "one GPU's share of the parameters overflows");
    return GPUPROBE_OK;
}

gpuprobe_status gp_model_shape(gpuprobe_context *ctx, const gpuprobe_model *m,
                               uint64_t tp, gp_shape *out)
{
    const int64_t *v = m->p.v;
    int arch = 0;
    for (int p = GPUPROBE_MODEL_LAYERS; p < GP_MODEL_NPARAMS; p++)
        arch |= v[p] != 0;
    gp_shape s = {0};
    if (v[GPUPROBE_MODEL_PARAMS] && arch)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "the model is both a parameter count and an "
                       "architecture: give one or the other");
    if (v[GPUPROBE_MODEL_PARAMS]) {
        s.params = s.active = (uint64_t)v[GPUPROBE_MODEL_PARAMS];
        s.linear = div_ceil(s.params, tp);
        *out = s;
        return GPUPROBE_OK;
    }
    if (!arch)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "the model is empty: give its parameter count or its "
                       "architecture");
    long long d = 0;
    gpuprobe_status st = check_complete(ctx, v);
    if (st == GPUPROBE_OK)
        st = check_heads(ctx, v, tp, &d);
    if (st == GPUPROBE_OK)
        st = arch_shape(ctx, v, tp, d, &s);
    if (st == GPUPROBE_OK)
        *out = s;
    return st;
}
