/*
 * roofline.c - gpuprobe-fit --roofline (roofline.h): the devices' figures
 * as cli_roofline structures, the model's two operating points, the title
 * and the footer; cli_roofline_draw() and cli_plot_write() do the rest.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "roofline.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The roof: the fastest matmul throughput the estimate measured. */
static double roof_gflops(const gpuprobe_speed_figures *f)
{
    double r = f->prefill_flops;
    if (f->decode_flops > r)
        r = f->decode_flops;
    if (f->prefill_attn_flops > r)
        r = f->prefill_attn_flops;
    return r / 1e9;
}

static const char *bound_word(uint32_t b)
{
    return b == GPUPROBE_SPEED_BOUND_MEMORY ? "memory-bound" : "compute-bound";
}

/* The prefill's and the decode's points of device d. */
static size_t operating_points(const fit_roof_input *in, size_t d, cli_roof_extra *x,
                               char (*label)[96])
{
    const gpuprobe_speed *s = in->speed;
    size_t k = 0;
    if (s->prefill_bytes > 0 && s->prefill_s > 0) {
        snprintf(label[k], sizeof label[k], "prefill %lld tokens (%s)", (long long)in->prompt,
                 bound_word(s->prefill_bound));
        x[k] = (cli_roof_extra){d, s->prefill_flop / s->prefill_bytes,
                                s->prefill_flop / s->prefill_s / 1e9, label[k]};
        k++;
    }
    if (s->decode_bytes_mean > 0 && s->decode_tokens_per_s > 0) {
        snprintf(label[k], sizeof label[k], "decode, batch %lld: %.3g tok/s (%s)",
                 (long long)in->batch, s->decode_tokens_per_s, bound_word(s->decode_bound));
        x[k] = (cli_roof_extra){d, s->decode_flop_mean / s->decode_bytes_mean,
                                s->decode_flop_mean * s->decode_tokens_per_s / 1e9, label[k]};
        k++;
    }
    return k;
}

int fit_roofline_write(const char *path, const char *model, const fit_roof_input *in, size_t n)
{
    enum { MAXD = CLI_CHART_MAX_PANELS };
    cli_roof_device dev[MAXD];
    cli_roof roof[MAXD];
    cli_roof_extra extra[2 * MAXD];
    char label[2 * MAXD][96], sub[512] = "", date[32];
    size_t nd = 0, nx = 0;
    for (size_t i = 0; i < n && nd < MAXD; i++) {
        const gpuprobe_speed_figures *f = in[i].fig;
        roof[nd] = (cli_roof){f->dtype >= 0 ? gpuprobe_dtype_name((gpuprobe_dtype)f->dtype) : "fp32",
                              roof_gflops(f), 0, 0, NULL, 0};
        dev[nd] = (cli_roof_device){in[i].spec, in[i].name, f->read_bytes_per_s / 1e9, 0,
                                    &roof[nd], 1};
        nx += operating_points(&in[i], nd, &extra[nx], &label[nx]);
        size_t len = strlen(sub);
        snprintf(sub + len, sizeof sub - len, "%s%s", len ? ", " : "", in[i].name);
        nd++;
    }
    if (nd == 0) {
        cli_err("--roofline %s: no device has a speed estimate to draw", path);
        return 1;
    }
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &tm));
    size_t len = strlen(sub);
    snprintf(sub + len, sizeof sub - len, ", measured %s", date);
    cli_chart *c = cli_chart_create();
    if (!c) {
        cli_err("--roofline %s: out of memory", path);
        return 1;
    }
    char title[160], foot[1024], why[512];
    snprintf(title, sizeof title, "Roofline of %.100s: prefill and decode", model);
    cli_chart_title(c, title, sub);
    cli_roofline r = {dev, nd, extra, nx};
    cli_roofline_draw(c, &r);
    snprintf(foot, sizeof foot,
             "%s %s --model --roofline. Slopes: the memory read rate the speed estimate measured "
             "on each device; flat roofs: the fastest of its matmuls at the model's own shapes "
             "(docs/speed.md). Rings: the model's prefill and decode, at their FLOP per byte and "
             "the throughput the estimate predicts (an efficient engine's; eager frameworks "
             "are slower).",
             cli_prog(), gpuprobe_version_string());
    cli_chart_footer(c, foot);
    int rc = cli_plot_write(c, path, why, sizeof why);
    cli_chart_destroy(c);
    if (rc != 0)
        cli_err("--roofline %s: %s", path, why);
    return rc != 0;
}
