/*
 * roofline.c - a roofline onto a chart, as a table and as JSON: per device
 * the slope of its measured read rate up to its highest ridge, a flat
 * roof per precision from its ridge on, the theoretical peaks dashed the
 * same way, the measured points labelled by n, the extra operating points
 * as rings. A panel per device, all on the same axes: one chart with
 * every device's lines would cross a CPU's and a GPU's roofs, slopes and
 * notes into a tangle (a GPU alone has four precisions), while panels
 * side by side with equal ranges still compare at a glance.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "roofline.h"

#include "axis.h"
#include "json.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

/* The memory's lines are black; each precision has a colour of the
 * sweep's palette, and a mark, of its own. */
#define MEMORY_COLOUR 5

double cli_roof_matmul_bytes(int64_t n, size_t in_bytes, size_t out_bytes)
{
    double nn = (double)n * (double)n;
    return nn * (2.0 * (double)in_bytes + (double)out_bytes);
}

double cli_roof_ridge(double gflops, double gbps)
{
    return gflops > 0 && gbps > 0 ? gflops / gbps : 0;
}

double cli_roof_attainable(double gflops, double gbps, double intensity)
{
    if (!(gbps > 0))
        return gflops;
    double slope = gbps * intensity;
    return slope < gflops ? slope : gflops;
}

static double intensity_of(const cli_roof_point *p)
{
    return p->bytes > 0 ? 2.0 * (double)p->n * (double)p->n * (double)p->n / p->bytes : 0;
}

/* Each precision's colour and mark, the same in every panel. */
static int colour_of(const char *dtype, int *mark)
{
    static const char *const names[] = {"fp32", "fp64", "tf32", "fp16", "bf16"};
    for (int i = 0; i < 5; i++)
        if (dtype && strcmp(dtype, names[i]) == 0) {
            *mark = i;
            return i; /* blue, vermillion, bluish green, reddish purple, orange */
        }
    *mark = 0;
    return 6; /* sky blue */
}

/* "cuda:0: NVIDIA H200", "cpu: Intel Xeon": a panel's title (the spec
 * first: a title too long for its panel is cut at the end). */
static void device_label(char *buf, size_t size, const cli_roof_device *d)
{
    snprintf(buf, size, "%s: %s", d->spec ? d->spec : "?", d->name ? d->name : "?");
}

/* The extremes of a device's roofs: the lowest and highest ridge and the
 * highest roof (measured, or with peak the theoretical ones against the
 * memory's peak). 0 when there is none. */
static void ridges(const cli_roof_device *d, int peak, double *lo, double *hi, double *top)
{
    *lo = *hi = *top = 0;
    for (size_t k = 0; k < d->nroofs; k++) {
        double g = peak ? d->roofs[k].peak_gflops : d->roofs[k].gflops;
        double x = cli_roof_ridge(g, peak ? d->peak_gbps : d->read_gbps);
        if (!(x > 0) || !(d->roofs[k].gflops > 0))
            continue;
        *lo = *lo > 0 && *lo < x ? *lo : x;
        *hi = *hi > x ? *hi : x;
        *top = *top > g ? *top : g;
    }
}

/* A slope: gbps x intensity from a tenth of the lowest ridge (and on to
 * the left edge) up to the highest ridge, where the highest roof is. */
static void slope(cli_chart *c, const cli_roof_device *d, size_t i, int peak)
{
    double lo, hi, top, gbps = peak ? d->peak_gbps : d->read_gbps;
    ridges(d, peak, &lo, &hi, &top);
    if (!(hi > 0))
        return;
    int s = cli_chart_series(c, NULL, peak ? CLI_LINE_DASHED : CLI_LINE_PLAIN, MEMORY_COLOUR);
    char id[48], note[200], v[32];
    snprintf(id, sizeof id, "%s-%zu", peak ? "memory-peak" : "memory", i);
    cli_chart_id(c, s, id);
    cli_chart_point(c, s, lo / 10, gbps * lo / 10);
    cli_chart_point(c, s, hi, top);
    cli_chart_extend(c, s, 1, 0);
    if (peak) /* the measured slope's note says it: the lines lie close */
        return;
    cli_axis_label(v, sizeof v, gbps, "B/s", 1e9);
    snprintf(note, sizeof note, "memory read %s", v); /* solid: measured, as the legend says */
    if (d->peak_gbps > 0) {
        char p[32];
        cli_axis_label(p, sizeof p, d->peak_gbps, "B/s", 1e9);
        snprintf(note, sizeof note, "memory read %s, peak %s", v, p);
    }
    cli_chart_note_at(c, s, CLI_NOTE_BELOW); /* clear of a line rising to the right */
    cli_chart_note(c, s, note);
}

/* A flat roof at g from its ridge on (from the left edge without a
 * slope), with its note. */
static void flat(cli_chart *c, double g, double gbps, double from, int dashed, int colour,
                 const char *id, const char *note)
{
    double x = cli_roof_ridge(g, gbps);
    int s = cli_chart_series(c, NULL, dashed ? CLI_LINE_DASHED : CLI_LINE_PLAIN, colour);
    cli_chart_id(c, s, id);
    cli_chart_point(c, s, x > 0 ? x : from, g);
    cli_chart_point(c, s, 2 * (x > 0 ? x : from), g);
    cli_chart_extend(c, s, !(x > 0), 1);
    cli_chart_note_at(c, s, CLI_NOTE_END); /* clear of the slope and the points */
    cli_chart_note(c, s, note);
}

/* "fp16, bf16 peak 989 TFLOP/s": roof k's peak with every later roof's of
 * the same value; "" when an earlier roof's note says it already. */
static void peak_note(char *buf, size_t size, const cli_roof_device *d, size_t k)
{
    const cli_roof *r = &d->roofs[k];
    char v[32];
    buf[0] = '\0';
    for (size_t j = 0; j < k; j++)
        if (d->roofs[j].gflops > 0 && d->roofs[j].peak_gflops == r->peak_gflops)
            return;
    snprintf(buf, size, "%s", r->dtype);
    for (size_t j = k + 1; j < d->nroofs; j++)
        if (d->roofs[j].gflops > 0 && d->roofs[j].peak_gflops == r->peak_gflops)
            snprintf(buf + strlen(buf), size - strlen(buf), ", %s", d->roofs[j].dtype);
    cli_axis_label(v, sizeof v, r->peak_gflops, "FLOP/s", 1e9);
    snprintf(buf + strlen(buf), size - strlen(buf), " peak %s", v);
}

/* Roof k of device i, in one of three parts (so that the notes of the
 * measured roofs are placed first, then the peaks'): 0 the measured
 * roof, 1 its peak dashed, 2 its points (named in the legend unless
 * named: a roof of its precision came before). */
static void roof(cli_chart *c, const cli_roof_device *d, size_t i, size_t k, int part, int named)
{
    const cli_roof *r = &d->roofs[k];
    char id[48], note[200], v[32];
    int mark = 0, colour = colour_of(r->dtype, &mark);
    double from = r->npoints ? intensity_of(&r->points[0]) : 1;
    if (part == 0) {
        cli_axis_label(v, sizeof v, r->gflops, "FLOP/s", 1e9);
        snprintf(id, sizeof id, "roof-%zu-%zu", i, k);
        snprintf(note, sizeof note, "%s roof %s", r->dtype, v);
        flat(c, r->gflops, d->read_gbps, from, 0, colour, id, note);
    } else if (part == 1 && r->peak_gflops > 0) {
        snprintf(id, sizeof id, "peak-%zu-%zu", i, k);
        peak_note(note, sizeof note, d, k);
        flat(c, r->peak_gflops, d->peak_gbps, from, 1, colour, id, note[0] ? note : NULL);
    } else if (part == 2) {
        int s = cli_chart_series(c, named ? NULL : r->dtype, CLI_LINE_SOLID, colour);
        cli_chart_mark(c, s, mark);
        for (size_t p = 0; p < r->npoints; p++) {
            char n[32];
            cli_chart_point(c, s, intensity_of(&r->points[p]), r->points[p].gflops);
            snprintf(n, sizeof n, "n=%lld", (long long)r->points[p].n);
            cli_chart_point_text(c, s, n);
        }
    }
}

/* 1 when a roof of that precision was drawn before roof k of device i. */
static int named_before(const cli_roofline *r, size_t i, size_t k)
{
    const char *dtype = r->devices[i].roofs[k].dtype;
    for (size_t a = 0; a <= i; a++)
        for (size_t b = 0; b < (a < i ? r->devices[a].nroofs : k); b++)
            if (r->devices[a].roofs[b].gflops > 0 && strcmp(r->devices[a].roofs[b].dtype, dtype) == 0)
                return 1;
    return 0;
}

/* Device i's panel: its slopes, roofs, points and extra points. */
static void device_panel(cli_chart *c, const cli_roofline *r, size_t i, int *peaks)
{
    const cli_roof_device *d = &r->devices[i];
    char title[300];
    device_label(title, sizeof title, d);
    cli_chart_panel(c, title);
    slope(c, d, i, 0);
    if (d->peak_gbps > 0)
        slope(c, d, i, 1);
    for (int part = 0; part < 3; part++)
        for (size_t k = 0; k < d->nroofs; k++) {
            if (!(d->roofs[k].gflops > 0))
                continue;
            *peaks |= d->roofs[k].peak_gflops > 0 || d->peak_gbps > 0;
            roof(c, d, i, k, part, named_before(r, i, k));
        }
    for (size_t e = 0; e < r->nextra; e++)
        if (r->extra[e].device == i)
            cli_chart_label(c, r->extra[e].intensity, r->extra[e].gflops, r->extra[e].label, MEMORY_COLOUR);
}

void cli_roofline_draw(cli_chart *c, const cli_roofline *r)
{
    int peaks = 0;
    size_t panels = 0;
    for (size_t i = 0; i < r->ndevices; i++) {
        int any = 0;
        for (size_t k = 0; k < r->devices[i].nroofs; k++)
            any |= r->devices[i].roofs[k].gflops > 0;
        if (any && panels++ < CLI_CHART_MAX_PANELS)
            device_panel(c, r, i, &peaks);
    }
    cli_chart_series(c, "solid: measured roof", CLI_LINE_PLAIN, CLI_CHART_GREY);
    if (peaks)
        cli_chart_series(c, "dashed: theoretical peak", CLI_LINE_DASHED, CLI_CHART_GREY);
    cli_chart_series(c, "memory bandwidth", CLI_LINE_PLAIN, MEMORY_COLOUR);
    cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG10,
                   "Arithmetic intensity (FLOP per byte of memory traffic, log scale)", NULL, 1);
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "Attainable throughput (FLOP/s, log scale)",
                   "FLOP/s", 1e9);
}

/* ---- JSON ---- */

static void num_or_null(struct json_object *o, const char *key, double v)
{
    if (v > 0)
        cli_set_num(o, key, v);
    else
        cli_set_null(o, key);
}

static struct json_object *roof_json(const cli_roof_device *d, const cli_roof *r)
{
    struct json_object *o = cli_obj(), *pts = cli_arr();
    cli_set_str(o, "dtype", r->dtype);
    num_or_null(o, "gflops", r->gflops);
    if (r->gflops > 0)
        cli_set_i64(o, "n", r->n);
    else
        cli_set_null(o, "n");
    num_or_null(o, "ridge", cli_roof_ridge(r->gflops, d->read_gbps));
    num_or_null(o, "peak_gflops", r->peak_gflops);
    num_or_null(o, "peak_ridge", cli_roof_ridge(r->peak_gflops, d->peak_gbps));
    for (size_t p = 0; p < r->npoints; p++) {
        const cli_roof_point *pt = &r->points[p];
        struct json_object *x = cli_obj();
        double in = intensity_of(pt);
        cli_set_i64(x, "n", pt->n);
        cli_set_num(x, "flop", 2.0 * (double)pt->n * (double)pt->n * (double)pt->n);
        cli_set_num(x, "bytes", pt->bytes);
        cli_set_num(x, "intensity", in);
        cli_set_num(x, "gflops", pt->gflops);
        cli_set_num(x, "attainable_gflops", cli_roof_attainable(r->gflops, d->read_gbps, in));
        cli_push(pts, x);
    }
    cli_set(o, "points", pts);
    return o;
}

struct json_object *cli_roofline_json(const cli_roofline *r)
{
    struct json_object *arr = cli_arr();
    for (size_t i = 0; i < r->ndevices; i++) {
        const cli_roof_device *d = &r->devices[i];
        struct json_object *o = cli_obj(), *roofs = cli_arr();
        cli_set_str(o, "device", d->spec);
        cli_set_str(o, "device_name", d->name);
        num_or_null(o, "read_gbps", d->read_gbps);
        num_or_null(o, "memory_peak_gbps", d->peak_gbps);
        for (size_t k = 0; k < d->nroofs; k++)
            cli_push(roofs, roof_json(d, &d->roofs[k]));
        cli_set(o, "roofs", roofs);
        cli_push(arr, o);
    }
    return arr;
}

/* ---- text ---- */

static void print_roof(const cli_roof_device *d, const cli_roof *r)
{
    char v[32], p[32];
    if (!(r->gflops > 0)) {
        cli_line("  %s: no roof (no size was measured)", r->dtype);
        return;
    }
    cli_axis_label(v, sizeof v, r->gflops, "FLOP/s", 1e9);
    cli_put("  %s: roof %s (measured at n = %lld)", r->dtype, v, (long long)r->n);
    double ridge = cli_roof_ridge(r->gflops, d->read_gbps);
    if (ridge > 0)
        cli_put(", ridge at %.3g FLOP/byte", ridge);
    if (r->peak_gflops > 0) {
        cli_axis_label(p, sizeof p, r->peak_gflops, "FLOP/s", 1e9);
        cli_put("; peak %s", p);
        double pr = cli_roof_ridge(r->peak_gflops, d->peak_gbps);
        if (pr > 0)
            cli_put(", ridge %.3g", pr);
    }
    cli_endl();
    cli_line("  %8s %10s %11s %14s", "n", "FLOP/byte", "GFLOP/s", "of attainable");
    for (size_t i = 0; i < r->npoints; i++) {
        const cli_roof_point *pt = &r->points[i];
        double in = intensity_of(pt), att = cli_roof_attainable(r->gflops, d->read_gbps, in);
        cli_line("  %8lld %10.3g %11.1f %13.0f%%", (long long)pt->n, in, pt->gflops,
                 att > 0 ? 100 * pt->gflops / att : 0);
    }
}

void cli_roofline_print(const cli_roofline *r)
{
    for (size_t i = 0; i < r->ndevices; i++) {
        const cli_roof_device *d = &r->devices[i];
        char v[32], p[32];
        cli_endl();
        cli_put("%s (%s): ", d->spec, d->name);
        if (d->read_gbps > 0) {
            cli_axis_label(v, sizeof v, d->read_gbps, "B/s", 1e9);
            cli_put("memory read %s (measured)", v);
        } else {
            cli_put("memory read not measured (no slope)");
        }
        if (d->peak_gbps > 0) {
            cli_axis_label(p, sizeof p, d->peak_gbps, "B/s", 1e9);
            cli_put(", peak %s", p);
        }
        cli_line(":");
        for (size_t k = 0; k < d->nroofs; k++)
            print_roof(d, &d->roofs[k]);
    }
}
