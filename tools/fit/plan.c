/*
 * plan.c - gpuprobe-fit --model (plan.h): the plan against each device,
 * the best device, the largest context and batch, the fewest GPUs; text
 * and JSON.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "plan.h"
#include "roofline.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One device's column. */
typedef struct column {
    size_t index;
    const char *spec, *name;
    int kind;
    gpuprobe_status st; /* of its plan */
    char error[512];
    gpuprobe_plan plan;
    /* --prompt, --generate: the figures measured there and the estimate */
    gpuprobe_status speed_st;
    char speed_error[512];
    gpuprobe_speed_figures fig;
    gpuprobe_speed speed;
} column;

/* The fewest GPUs that hold the model (gpuprobe_plan_gpus()). */
typedef struct fewest {
    int asked;
    gpuprobe_status st;
    char error[512];
    size_t count, devices[FIT_MAX_DEVICES];
} fewest;

/* Everything the output shows. */
typedef struct answer {
    gpuprobe_plan pure;     /* no device: parameters, the per-token figures */
    column *col;
    size_t n;
    long best;              /* column of the best device; -1: none */
    int failed;             /* a device's plan failed */
    fewest few;
    size_t room;            /* with --gpus N: GPUs with room for a share */
    int64_t context, batch; /* the workload planned */
} answer;

static int64_t opt(const fit_question *q, gpuprobe_plan_param p)
{
    int64_t v = 0;
    gpuprobe_plan_options_get(q->opts, p, &v);
    return v;
}

/* ---- the plans -------------------------------------------------------------- */

static int plan_columns(gpuprobe_context *ctx, const fit_question *q, answer *a)
{
    a->failed = 0;
    for (size_t i = 0; i < a->n; i++) {
        column *c = &a->col[i];
        c->plan = (gpuprobe_plan)GPUPROBE_PLAN_INIT;
        c->st = gpuprobe_plan_device(ctx, c->index, q->cfg.model, q->opts, 0, &c->plan);
        if (c->st == GPUPROBE_OK)
            continue;
        snprintf(c->error, sizeof c->error, "%s", gpuprobe_last_error(ctx));
        cli_report(ctx, c->st, "%s: plan", c->spec);
        a->failed = 1;
    }
    return a->failed;
}

/* Room left after the plan (negative: what is missing), saturated. */
static int64_t headroom(const gpuprobe_plan *p)
{
    uint64_t a = p->available_bytes, t = p->total_bytes;
    if (a >= t)
        return a - t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(a - t);
    return t - a > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)(t - a);
}

/* The device where the model fits with the most room, a GPU before the
 * CPU (as device selection prefers one); if it fits nowhere, the one
 * closest to fitting. Ties: the lower index. */
static long best_column(const answer *a)
{
    long best = -1;
    for (size_t i = 0; i < a->n; i++) {
        const column *c = &a->col[i];
        if (c->st != GPUPROBE_OK)
            continue;
        if (best < 0) {
            best = (long)i;
            continue;
        }
        const column *b = &a->col[best];
        int cf = c->plan.fits != 0, bf = b->plan.fits != 0;
        int cg = c->kind != GPUPROBE_DEVICE_CPU, bg = b->kind != GPUPROBE_DEVICE_CPU;
        if (cf != bf ? cf > bf
            : cf && cg != bg ? cg > bg
                             : headroom(&c->plan) > headroom(&b->plan))
            best = (long)i;
    }
    return best;
}

/* --max-context, --max-batch: the largest value that fits on the best
 * device becomes the workload's, and every device is planned again. */
static void solve(gpuprobe_context *ctx, fit_question *q, answer *a)
{
    if (q->solve == FIT_SOLVE_NONE || a->best < 0)
        return;
    const gpuprobe_plan *p = &a->col[a->best].plan;
    uint64_t v = q->solve == FIT_SOLVE_CONTEXT ? p->largest_context : p->largest_batch;
    if (v == 0)
        return; /* not even one token (sequence) fits: the table says so */
    gpuprobe_plan_options_set(q->opts, q->solve == FIT_SOLVE_CONTEXT ? GPUPROBE_PLAN_CONTEXT
                                                                     : GPUPROBE_PLAN_BATCH,
                              (int64_t)v);
    plan_columns(ctx, q, a);
    a->best = best_column(a);
}

static void ask_fewest(gpuprobe_context *ctx, const fit_question *q, fewest *f)
{
    f->asked = q->fewest;
    if (!f->asked)
        return;
    f->st = gpuprobe_plan_gpus(ctx, q->cfg.model, q->opts, 0, &f->count, f->devices,
                               FIT_MAX_DEVICES);
    if (f->st != GPUPROBE_OK)
        snprintf(f->error, sizeof f->error, "%s", gpuprobe_last_error(ctx));
}

/* With --gpus N: how many GPU columns have room for one share. */
static size_t gpus_with_room(const answer *a)
{
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        k += a->col[i].st == GPUPROBE_OK && a->col[i].kind != GPUPROBE_DEVICE_CPU &&
             a->col[i].plan.fits;
    return k;
}

static int fits(const fit_question *q, const answer *a)
{
    if (q->gpus > 1)
        return a->room >= (size_t)q->gpus;
    if (a->best >= 0 && a->col[a->best].plan.fits)
        return 1;
    return a->few.asked && a->few.st == GPUPROBE_OK;
}

static const char *spec_of(gpuprobe_context *ctx, size_t index)
{
    const char *s = "?";
    gpuprobe_device_get_string(ctx, index, GPUPROBE_ATTR_SPEC, &s);
    return s;
}

/* --prompt, --generate: each planned device's figures measured and the
 * estimate made of them (on the CPU the whole model, as its plan). A
 * failure is reported and the column says so; the plan stands. */
static void speed_columns(gpuprobe_context *ctx, const fit_question *q, answer *a)
{
    for (size_t i = 0; q->speed && i < a->n; i++) {
        column *c = &a->col[i];
        if (c->st != GPUPROBE_OK)
            continue;
        int cpu_of_tp = c->kind == GPUPROBE_DEVICE_CPU && q->gpus > 1;
        if (cpu_of_tp)
            gpuprobe_plan_options_set(q->opts, GPUPROBE_PLAN_GPUS, 1);
        c->fig = (gpuprobe_speed_figures)GPUPROBE_SPEED_FIGURES_INIT;
        c->speed = (gpuprobe_speed)GPUPROBE_SPEED_INIT;
        c->speed_st = gpuprobe_speed_measure(ctx, c->index, q->cfg.model, q->opts, q->sopts, 0,
                                             &c->fig);
        if (c->speed_st == GPUPROBE_OK)
            c->speed_st = gpuprobe_speed_compute(ctx, q->cfg.model, q->opts, q->sopts, &c->fig,
                                                 0, &c->speed);
        if (cpu_of_tp)
            gpuprobe_plan_options_set(q->opts, GPUPROBE_PLAN_GPUS, q->gpus);
        if (c->speed_st == GPUPROBE_OK)
            continue;
        snprintf(c->speed_error, sizeof c->speed_error, "%s", gpuprobe_last_error(ctx));
        cli_report(ctx, c->speed_st, "%s: speed", c->spec);
        a->failed = 1;
    }
}

static const char *bound_name(uint32_t b)
{
    return b == GPUPROBE_SPEED_BOUND_COMPUTE ? "compute" : "memory";
}

/* ---- text ------------------------------------------------------------------- */

enum { ROW_LABEL = 16 };

/* One table row: the label, then one cell per column, right-aligned to
 * its width. cell() writes column i's text into buf. */
static void row(const answer *a, const int *width, const char *label,
                void (*cell)(const column *c, char *buf, size_t size))
{
    cli_put("%-*s", ROW_LABEL, label);
    for (size_t i = 0; i < a->n; i++) {
        char buf[48] = "?";
        if (a->col[i].st == GPUPROBE_OK)
            cell(&a->col[i], buf, sizeof buf);
        cli_put("  %*s", width[i], buf);
    }
    cli_endl();
}

#define BYTES_CELL(fn, field)                                          \
    static void fn(const column *c, char *buf, size_t size)            \
    {                                                                  \
        gp_format_bytes(buf, size, c->plan.field);                           \
    }
BYTES_CELL(cell_weights, weights_bytes)
BYTES_CELL(cell_gradients, gradient_bytes)
BYTES_CELL(cell_optimizer, optimizer_bytes)
BYTES_CELL(cell_kv, kv_cache_bytes)
BYTES_CELL(cell_activations, activation_bytes)
BYTES_CELL(cell_overhead, overhead_bytes)
BYTES_CELL(cell_margin, margin_bytes)
BYTES_CELL(cell_total, total_bytes)
BYTES_CELL(cell_available, available_bytes)

static void cell_fits(const column *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s", c->plan.fits ? "yes" : "no");
}

static void cell_headroom(const column *c, char *buf, size_t size)
{
    int64_t h = headroom(&c->plan);
    char b[32];
    gp_format_bytes(b, sizeof b, h < 0 ? (uint64_t)0 - (uint64_t)h : (uint64_t)h);
    snprintf(buf, size, "%s%s", h < 0 ? "-" : "", b);
}

static void cell_first_token(const column *c, char *buf, size_t size)
{
    if (c->speed_st == GPUPROBE_OK)
        cli_seconds(buf, size, c->speed.prefill_s);
    else
        snprintf(buf, size, "failed");
}

static void cell_decode(const column *c, char *buf, size_t size)
{
    if (c->speed_st == GPUPROBE_OK)
        snprintf(buf, size, "%.3g tok/s", c->speed.decode_tokens_per_s);
    else
        snprintf(buf, size, "failed");
}

static void cell_context(const column *c, char *buf, size_t size)
{
    snprintf(buf, size, "%llu", (unsigned long long)c->plan.largest_context);
}

static void cell_batch(const column *c, char *buf, size_t size)
{
    snprintf(buf, size, "%llu", (unsigned long long)c->plan.largest_batch);
}

static void text_header(const fit_question *q, const answer *a)
{
    char n[32], kv[32];
    const gpuprobe_plan *p = &a->pure;
    gp_format_count(n, sizeof n, p->params);
    cli_line("Model: %s (%s: %s)", q->name,
             q->found.source == CLI_MODEL_SHIPPED ? "shipped config"
             : q->found.source == CLI_MODEL_HUB   ? "Hugging Face cache"
                                                  : "config",
             q->found.path);
    if (p->active_params != p->params) {
        char act[32];
        gp_format_count(act, sizeof act, p->active_params);
        cli_line("  %s parameters (%llu), %s active per token", n, (unsigned long long)p->params,
                 act);
    } else {
        cli_line("  %s parameters (%llu)", n, (unsigned long long)p->params);
    }
    gpuprobe_dtype wd = (gpuprobe_dtype)opt(q, GPUPROBE_PLAN_WEIGHTS_DTYPE);
    gp_format_bytes(kv, sizeof kv, p->kv_bytes_per_token);
    cli_line("  %s weights%s%s%s, %s KV cache (%s per token%s)", gpuprobe_dtype_name(wd),
             q->cfg.torch_dtype[0] ? " (torch_dtype " : "", q->cfg.torch_dtype,
             q->cfg.torch_dtype[0] ? ")" : "", gpuprobe_dtype_name(cli_kv_dtype(q->opts)), kv,
             q->gpus > 1 ? " on each GPU" : "");
    uint64_t maxpos = q->cfg.max_positions;
    char positions[96] = "";
    if (maxpos && (uint64_t)a->context > maxpos)
        snprintf(positions, sizeof positions, " (beyond the model's %llu positions)",
                 (unsigned long long)maxpos);
    else if (maxpos && !q->context_given && q->solve != FIT_SOLVE_CONTEXT)
        snprintf(positions, sizeof positions, " (the model allows %llu)",
                 (unsigned long long)maxpos);
    cli_line("Workload: %s, %lld sequence%s x %lld tokens%s%s",
             gpuprobe_workload_name((gpuprobe_workload)opt(q, GPUPROBE_PLAN_WORKLOAD)),
             (long long)a->batch, a->batch == 1 ? "" : "s", (long long)a->context, positions,
             p->flags & GPUPROBE_PLAN_WINDOWED ? "; the sliding window caps the KV cache" : "");
    if (q->gpus > 1)
        cli_line("Split over %lld GPUs (tensor parallel): each GPU column is one GPU's share, "
                 "the cpu column the whole model.", (long long)q->gpus);
    cli_endl();
}

/* What the columns are: runs of devices of one name said once. */
static void text_legend(const answer *a)
{
    int gpus = 0;
    for (size_t i = 0; i < a->n;) {
        size_t j = i + 1;
        while (j < a->n && a->col[j].kind == a->col[i].kind &&
               strcmp(a->col[j].name, a->col[i].name) == 0)
            j++;
        if (j - i > 1)
            cli_line("  %s to %s: %s", a->col[i].spec, a->col[j - 1].spec, a->col[i].name);
        else
            cli_line("  %s: %s%s", a->col[i].spec, a->col[i].name,
                     a->col[i].kind == GPUPROBE_DEVICE_CPU ? " (available: RAM, cgroup-aware)" : "");
        gpus |= a->col[i].kind != GPUPROBE_DEVICE_CPU;
        i = j;
    }
    if (gpus)
        cli_line("  (a GPU's available: its free memory in whole 2 MiB pages, less what the "
                 "driver keeps)");
    for (size_t i = 0; i < a->n; i++)
        if (a->col[i].st != GPUPROBE_OK)
            cli_line("  %s: the plan failed: %s", a->col[i].spec, a->col[i].error);
}

/* "2.1 TFLOP", "580 GB/s": decimal units of what is counted. */
static void si(char *buf, size_t size, double v, const char *unit)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    size_t p = 0;
    while (v >= 999.5 && p + 1 < sizeof prefix / sizeof prefix[0]) {
        v /= 1000;
        p++;
    }
    snprintf(buf, size, "%.3g %s%s", v, prefix[p], unit);
}

/* Per device: each figure with its bound and what was measured. */
static void text_speed(const fit_question *q, const answer *a)
{
    int64_t prompt = 0, batch = a->batch;
    gpuprobe_speed_options_get(q->sopts, GPUPROBE_SPEED_PROMPT, &prompt);
    for (size_t i = 0; q->speed && i < a->n; i++) {
        const column *c = &a->col[i];
        if (c->st != GPUPROBE_OK)
            continue;
        if (c->speed_st != GPUPROBE_OK) {
            cli_line("  %s: the speed could not be measured: %s", c->spec, c->speed_error);
            continue;
        }
        const gpuprobe_speed *s = &c->speed;
        char t[32], flop[32], rate[32], bytes[32], bw[32], th[32] = "";
        cli_seconds(t, sizeof t, s->prefill_s);
        si(flop, sizeof flop, s->prefill_flop, "FLOP");
        si(rate, sizeof rate, s->prefill_flops, "FLOP/s");
        si(bytes, sizeof bytes, s->decode_bytes_mean, "B");
        si(bw, sizeof bw, s->read_bytes_per_s, "B/s");
        if (c->fig.cpu_threads > 0)
            snprintf(th, sizeof th, ", %d thread%s", (int)c->fig.cpu_threads,
                     c->fig.cpu_threads == 1 ? "" : "s");
        cli_line("  %s: prefill %lld tokens%s: %s (%s-bound, %s at %s measured); decode: %.3g "
                 "tokens/s%s (%s-bound, %s per token at %s measured%s)",
                 c->spec, (long long)prompt, batch > 1 ? " x batch" : "", t,
                 bound_name(s->prefill_bound), flop, rate, s->decode_tokens_per_s,
                 batch > 1 ? " a sequence" : "", bound_name(s->decode_bound), bytes, bw, th);
    }
    if (!q->speed)
        return;
    int64_t ns = 0, eff = 0;
    gpuprobe_speed_options_get(q->sopts, GPUPROBE_SPEED_LAYER_OVERHEAD_NS, &ns);
    gpuprobe_speed_options_get(q->sopts, GPUPROBE_SPEED_EFFICIENCY, &eff);
    cli_line("  (speed: what an efficient engine attains: %g us per layer and pass, %lld%% of "
             "the rates measured; eager frameworks are slower, see docs/speed.md%s)",
             (double)ns / 1000, (long long)eff,
             q->gpus > 1 ? "; the GPUs' communication is not modelled" : "");
}

static void text_table(const fit_question *q, const answer *a)
{
    int width[FIT_MAX_DEVICES];
    int training = 0;
    for (size_t i = 0; i < a->n; i++) {
        char buf[48];
        int w = (int)strlen(a->col[i].spec);
        gp_format_bytes(buf, sizeof buf, a->col[i].plan.available_bytes);
        w = w > (int)strlen(buf) + 1 ? w : (int)strlen(buf) + 1;
        width[i] = w < 9 ? 9 : w;
        training |= a->col[i].plan.gradient_bytes != 0;
    }
    cli_put("%-*s", ROW_LABEL, "");
    for (size_t i = 0; i < a->n; i++)
        cli_put("  %*s", width[i], a->col[i].spec);
    cli_endl();
    row(a, width, "weights", cell_weights);
    if (training) {
        row(a, width, "gradients", cell_gradients);
        row(a, width, "optimizer", cell_optimizer);
    }
    row(a, width, "KV cache", cell_kv);
    row(a, width, "activations", cell_activations);
    row(a, width, "overhead", cell_overhead);
    row(a, width, "margin", cell_margin);
    row(a, width, "total", cell_total);
    row(a, width, "available", cell_available);
    row(a, width, "fits", cell_fits);
    row(a, width, "headroom", cell_headroom);
    row(a, width, "largest context", cell_context);
    row(a, width, "largest batch", cell_batch);
    if (q->speed) {
        row(a, width, "first token", cell_first_token);
        row(a, width, "decode", cell_decode);
    }
    text_legend(a);
    text_speed(q, a);
    cli_endl();
}

static void text_best(const fit_question *q, const answer *a)
{
    if (a->best < 0) {
        cli_line("Best device: none (no device could be planned).");
        return;
    }
    const column *c = &a->col[a->best];
    const gpuprobe_plan *p = &c->plan;
    char h[32], need[32];
    int64_t room = headroom(p);
    gp_format_bytes(h, sizeof h, room < 0 ? (uint64_t)0 - (uint64_t)room : (uint64_t)room);
    gp_format_bytes(need, sizeof need, p->total_bytes);
    if (p->fits)
        cli_line("Best device: %s (%s): fits, %s to spare.", c->spec, c->name, h);
    else
        cli_line("Best device: %s (%s): does not fit, %s short of the %s it needs.", c->spec,
                 c->name, h, need);
    if (p->largest_context)
        cli_line("  Largest context there: %llu tokens (batch %lld).",
                 (unsigned long long)p->largest_context, (long long)a->batch);
    else
        cli_line("  Largest context there: none, not even one token at batch %lld.",
                 (long long)a->batch);
    if (p->largest_batch)
        cli_line("  Largest batch there: %llu sequences of %lld tokens.",
                 (unsigned long long)p->largest_batch, (long long)a->context);
    else
        cli_line("  Largest batch there: none, not even one sequence of %lld tokens.",
                 (long long)a->context);
    (void)q;
}

static void text_gpus(gpuprobe_context *ctx, const fit_question *q, const answer *a)
{
    if (q->gpus > 1)
        cli_line("On %lld GPUs: %zu have room for a share: %s.", (long long)q->gpus, a->room,
                 a->room >= (size_t)q->gpus ? "fits" : "does not fit");
    const fewest *f = &a->few;
    if (!f->asked)
        return;
    if (f->st != GPUPROBE_OK) {
        cli_line("Fewest GPUs: none (%s).", f->error);
        return;
    }
    cli_put("Fewest GPUs: %zu (", f->count);
    for (size_t i = 0; i < f->count && i < FIT_MAX_DEVICES; i++)
        cli_put("%s%s", i ? ", " : "", spec_of(ctx, f->devices[i]));
    cli_line(")%s.", f->count > 1 ? ", tensor parallel" : "");
}

/* ---- JSON ------------------------------------------------------------------- */

static struct json_object *json_model(const fit_question *q, const answer *a)
{
    struct json_object *m = cli_obj();
    cli_set_str(m, "name", q->name);
    cli_set_str(m, "source", cli_model_source_name(q->found.source));
    cli_set_str(m, "config", q->found.path);
    cli_set_u64(m, "params", a->pure.params);
    cli_set_u64(m, "active_params", a->pure.active_params);
    if (q->cfg.max_positions)
        cli_set_u64(m, "max_position_embeddings", q->cfg.max_positions);
    else
        cli_set_null(m, "max_position_embeddings");
    cli_set_str(m, "torch_dtype", q->cfg.torch_dtype[0] ? q->cfg.torch_dtype : NULL);
    return m;
}

static struct json_object *json_workload(const fit_question *q, const answer *a)
{
    struct json_object *w = cli_obj();
    cli_set_str(w, "workload",
                gpuprobe_workload_name((gpuprobe_workload)opt(q, GPUPROBE_PLAN_WORKLOAD)));
    cli_set_str(w, "weights_dtype",
                gpuprobe_dtype_name((gpuprobe_dtype)opt(q, GPUPROBE_PLAN_WEIGHTS_DTYPE)));
    cli_set_str(w, "kv_dtype", gpuprobe_dtype_name(cli_kv_dtype(q->opts)));
    cli_set_i64(w, "context", a->context);
    cli_set_i64(w, "batch", a->batch);
    cli_set_i64(w, "gpus", q->gpus);
    cli_set_i64(w, "margin_bytes", opt(q, GPUPROBE_PLAN_MARGIN));
    cli_set_u64(w, "kv_bytes_per_token", a->pure.kv_bytes_per_token);
    int64_t p = 0, g = 0;
    if (q->speed) {
        gpuprobe_speed_options_get(q->sopts, GPUPROBE_SPEED_PROMPT, &p);
        gpuprobe_speed_options_get(q->sopts, GPUPROBE_SPEED_GENERATE, &g);
        cli_set_i64(w, "prompt", p);
        cli_set_i64(w, "generate", g);
    } else {
        cli_set_null(w, "prompt");
        cli_set_null(w, "generate");
    }
    return w;
}

static struct json_object *json_speed(const column *c)
{
    struct json_object *o = cli_obj();
    if (c->speed_st != GPUPROBE_OK) {
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(c->speed_st), c->speed_error));
        return o;
    }
    cli_set_null(o, "error");
    const gpuprobe_speed *s = &c->speed;
    const gpuprobe_speed_figures *f = &c->fig;
    struct json_object *m = cli_obj();
    cli_set_num(m, "read_bytes_per_s", f->read_bytes_per_s);
    cli_set_num(m, "decode_flops", f->decode_flops);
    cli_set_num(m, "prefill_flops", f->prefill_flops);
    cli_set_num(m, "prefill_attn_flops", f->prefill_attn_flops);
    cli_set_str(m, "dtype", gpuprobe_dtype_name((gpuprobe_dtype)f->dtype));
    cli_set_bool(m, "dtype_substituted", (f->flags & GPUPROBE_SPEED_DTYPE_SUBSTITUTED) != 0);
    cli_set_bool(m, "cached", (f->flags & GPUPROBE_SPEED_CACHED) != 0);
    cli_set_i64(m, "cpu_threads", f->cpu_threads);
    cli_set(o, "measured", m);
    static const struct {
        const char *key;
        size_t off;
    } d[] = {
#define F(x) {#x, offsetof(gpuprobe_speed, x)}
        F(prefill_s), F(prefill_flop), F(prefill_bytes), F(prefill_compute_s),
        F(prefill_memory_s), F(prefill_flops), F(decode_s), F(decode_tokens_per_s),
        F(decode_batch_tokens_per_s), F(decode_weight_bytes), F(decode_bytes_first),
        F(decode_bytes_last), F(decode_bytes_mean), F(decode_flop_mean),
        F(decode_step_first_s), F(decode_step_last_s), F(read_bytes_per_s), F(decode_flops),
        F(layer_overhead_s), F(efficiency), F(total_s),
#undef F
    };
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        cli_set_num(o, d[i].key, *(const double *)(const void *)((const char *)s + d[i].off));
    cli_set_str(o, "prefill_bound", bound_name(s->prefill_bound));
    cli_set_str(o, "decode_bound", bound_name(s->decode_bound));
    cli_set_u64(o, "decode_memory_steps", s->decode_memory_steps);
    cli_set_bool(o, "tp_communication_modelled", !(s->flags & GPUPROBE_SPEED_TP_NOT_MODELLED));
    cli_set_bool(o, "windowed", (s->flags & GPUPROBE_SPEED_WINDOWED) != 0);
    return o;
}

static struct json_object *json_column(const fit_question *q, const column *c)
{
    struct json_object *o = cli_obj();
    cli_set_str(o, "device", c->spec);
    cli_set_str(o, "name", c->name);
    if (c->st != GPUPROBE_OK) {
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(c->st), c->error));
        return o;
    }
    cli_set_null(o, "error");
    cli_set(o, "plan", cli_plan_json(&c->plan));
    cli_set_u64(o, "available_bytes", c->plan.available_bytes);
    cli_set_bool(o, "fits", c->plan.fits != 0);
    cli_set_i64(o, "headroom_bytes", headroom(&c->plan));
    cli_set_u64(o, "largest_context", c->plan.largest_context);
    cli_set_u64(o, "largest_batch", c->plan.largest_batch);
    if (q->speed)
        cli_set(o, "speed", json_speed(c));
    else
        cli_set_null(o, "speed");
    return o;
}

static struct json_object *json_fewest(gpuprobe_context *ctx, const fewest *f)
{
    struct json_object *o = cli_obj();
    struct json_object *list = cli_arr();
    if (f->st == GPUPROBE_OK) {
        cli_set_u64(o, "count", f->count);
        for (size_t i = 0; i < f->count && i < FIT_MAX_DEVICES; i++)
            cli_push(list, cli_string(spec_of(ctx, f->devices[i])));
        cli_set_null(o, "error");
    } else {
        cli_set_null(o, "count");
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(f->st), f->error));
    }
    cli_set(o, "devices", list);
    return o;
}

static int print_json(gpuprobe_context *ctx, const fit_question *q, const answer *a,
                      int roof_failed)
{
    struct json_object *doc = cli_doc();
    cli_set(doc, "model", json_model(q, a));
    cli_set(doc, "workload", json_workload(q, a));
    struct json_object *devs = cli_arr();
    for (size_t i = 0; i < a->n; i++)
        cli_push(devs, json_column(q, &a->col[i]));
    cli_set(doc, "devices", devs);
    const column *b = a->best >= 0 ? &a->col[a->best] : NULL;
    cli_set_str(doc, "best_device", b ? b->spec : NULL);
    if (b) {
        cli_set_u64(doc, "largest_context", b->plan.largest_context);
        cli_set_u64(doc, "largest_batch", b->plan.largest_batch);
    } else {
        cli_set_null(doc, "largest_context");
        cli_set_null(doc, "largest_batch");
    }
    if (a->few.asked)
        cli_set(doc, "fewest_gpus", json_fewest(ctx, &a->few));
    else
        cli_set_null(doc, "fewest_gpus");
    if (q->gpus > 1)
        cli_set_u64(doc, "gpus_with_room", a->room);
    cli_set_bool(doc, "fits_anywhere", fits(q, a));
    if (q->roofline)
        cli_set_str(doc, "roofline", roof_failed ? NULL : q->roofline);
    return cli_print_doc(doc);
}

/* ---- --roofline ---------------------------------------------------------------- */

/* The devices with a speed estimate, drawn. Returns 0, or 1 when the
 * picture could not be written. */
static int draw_roofline(const fit_question *q, const answer *a)
{
    fit_roof_input in[CLI_CHART_MAX_PANELS];
    size_t n = 0;
    int64_t prompt = 0;
    gpuprobe_speed_options_get(q->sopts, GPUPROBE_SPEED_PROMPT, &prompt);
    for (size_t i = 0; i < a->n && n < CLI_CHART_MAX_PANELS; i++) {
        const column *c = &a->col[i];
        if (c->speed_st == GPUPROBE_OK)
            in[n++] = (fit_roof_input){c->spec, c->name, &c->fig, &c->speed, prompt, a->batch};
    }
    return fit_roofline_write(q->roofline, q->name, in, n);
}

/* ---- the run ------------------------------------------------------------------ */

/* The library refuses the question itself (heads that --gpus does not
 * divide, a training rule missing): a usage error. Any other failure of
 * the pure plan (a figure beyond 2^64 bytes) is the answer "no". */
static int pure_plan(gpuprobe_context *ctx, fit_question *q, answer *a)
{
    a->pure = (gpuprobe_plan)GPUPROBE_PLAN_INIT;
    gpuprobe_status st = gpuprobe_plan_compute(ctx, q->cfg.model, q->opts, 0, &a->pure);
    if (st == GPUPROBE_ERR_INVALID_ARGUMENT || st == GPUPROBE_ERR_UNSUPPORTED) {
        cli_fail(ctx, st, "planning %s", q->name);
        return CLI_EXIT_USAGE;
    }
    if (st != GPUPROBE_OK)
        return cli_fail(ctx, st, "planning %s", q->name);
    return CLI_EXIT_OK;
}

static int setup_columns(gpuprobe_context *ctx, answer *a, const size_t *devices, size_t n)
{
    a->n = n;
    a->col = calloc(n ? n : 1, sizeof *a->col);
    if (!a->col)
        return cli_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "planning");
    for (size_t i = 0; i < n; i++) {
        column *c = &a->col[i];
        int64_t kind = 0;
        c->index = devices[i];
        c->spec = spec_of(ctx, devices[i]);
        c->name = "?";
        gpuprobe_device_get_string(ctx, devices[i], GPUPROBE_ATTR_NAME, &c->name);
        gpuprobe_device_get_int(ctx, devices[i], GPUPROBE_ATTR_KIND, &kind);
        c->kind = (int)kind;
    }
    return CLI_EXIT_OK;
}

int fit_plan_run(gpuprobe_context *ctx, fit_question *q, const size_t *devices, size_t n)
{
    answer a;
    memset(&a, 0, sizeof a);
    if (q->gpus > 1)
        gpuprobe_plan_options_set(q->opts, GPUPROBE_PLAN_GPUS, q->gpus);
    int rc = pure_plan(ctx, q, &a);
    if (rc == CLI_EXIT_OK)
        rc = setup_columns(ctx, &a, devices, n);
    if (rc != CLI_EXIT_OK) {
        free(a.col);
        return rc;
    }
    plan_columns(ctx, q, &a);
    a.best = best_column(&a);
    solve(ctx, q, &a);
    speed_columns(ctx, q, &a);
    ask_fewest(ctx, q, &a.few);
    a.room = gpus_with_room(&a);
    a.context = opt(q, GPUPROBE_PLAN_CONTEXT);
    a.batch = opt(q, GPUPROBE_PLAN_BATCH);
    int roof_failed = q->roofline ? draw_roofline(q, &a) : 0;
    if (cli_json()) {
        rc = print_json(ctx, q, &a, roof_failed);
    } else {
        text_header(q, &a);
        text_table(q, &a);
        text_best(q, &a);
        text_gpus(ctx, q, &a);
        if (q->roofline && !roof_failed)
            cli_line("Drawn into %s: each device's roofline from the figures measured here, with "
                     "the model's prefill and decode on it.", q->roofline);
    }
    if (rc == CLI_EXIT_OK && (a.failed || !fits(q, &a) || roof_failed))
        rc = CLI_EXIT_FAIL;
    free(a.col);
    return rc;
}
