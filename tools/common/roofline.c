/*
 * roofline.c - a roofline onto a chart, as a table and as JSON: per device
 * the slope of its measured read rate up to its highest ridge, a flat
 * roof per precision from its ridge on, the theoretical peaks dashed the
 * same way, the measured points labelled by n, the extra operating points
 * as rings. One chart for all devices: on shared axes their roofs and
 * ridges compare at a glance.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "roofline.h"

#include "axis.h"
#include "json.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

/* The memory's lines are black; the roofs take the other colours in the
 * sweep's order (the first five as its picture gives the same lines). */
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

static int roof_colour(size_t k)
{
    static const int order[] = {0, 1, 2, 3, 4, 6, 7}; /* all but MEMORY_COLOUR */
    return order[k % (sizeof order / sizeof order[0])];
}

static int is_gpu(const cli_roof_device *d)
{
    return d->spec && strncmp(d->spec, "cuda", 4) == 0;
}

/* "CPU", "NVIDIA H200", or "NVIDIA H200 (cuda:1)" when several GPUs are drawn. */
static void device_label(char *buf, size_t size, const cli_roof_device *d, size_t gpus)
{
    if (!is_gpu(d))
        snprintf(buf, size, "CPU");
    else if (gpus > 1)
        snprintf(buf, size, "%s (%s)", d->name, d->spec);
    else
        snprintf(buf, size, "%s", d->name);
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
static void slope(cli_chart *c, const cli_roof_device *d, size_t i, int peak, const char *who)
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
    cli_axis_label(v, sizeof v, gbps, "B/s", 1e9);
    if (peak)
        snprintf(note, sizeof note, "%s memory peak %s", who, v);
    else
        snprintf(note, sizeof note, "%s memory read %s (measured)", who, v);
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
    cli_chart_note(c, s, note);
}

/* Roof k of device i: measured, its peak dashed, its points. */
static void roof(cli_chart *c, const cli_roof_device *d, size_t i, size_t k, int colour, const char *who)
{
    const cli_roof *r = &d->roofs[k];
    char id[48], note[200], v[32], name[300];
    double from = r->npoints ? intensity_of(&r->points[0]) : 1;
    cli_axis_label(v, sizeof v, r->gflops, "FLOP/s", 1e9);
    snprintf(id, sizeof id, "roof-%zu-%zu", i, k);
    snprintf(note, sizeof note, "%s roof %s", r->dtype, v);
    flat(c, r->gflops, d->read_gbps, from, 0, colour, id, note);
    if (r->peak_gflops > 0) {
        cli_axis_label(v, sizeof v, r->peak_gflops, "FLOP/s", 1e9);
        snprintf(id, sizeof id, "peak-%zu-%zu", i, k);
        snprintf(note, sizeof note, "%s peak %s", r->dtype, v);
        flat(c, r->peak_gflops, d->peak_gbps, from, 1, colour, id, note);
    }
    snprintf(name, sizeof name, "%s %s", who, r->dtype);
    int s = cli_chart_series(c, name, CLI_LINE_SOLID, colour);
    for (size_t p = 0; p < r->npoints; p++) {
        char n[32];
        cli_chart_point(c, s, intensity_of(&r->points[p]), r->points[p].gflops);
        snprintf(n, sizeof n, "n=%lld", (long long)r->points[p].n);
        cli_chart_point_text(c, s, n);
    }
}

void cli_roofline_draw(cli_chart *c, const cli_roofline *r)
{
    size_t gpus = 0, colour = 0;
    int peaks = 0;
    for (size_t i = 0; i < r->ndevices; i++)
        gpus += is_gpu(&r->devices[i]);
    for (size_t i = 0; i < r->ndevices; i++) {
        const cli_roof_device *d = &r->devices[i];
        char who[200];
        device_label(who, sizeof who, d, gpus);
        slope(c, d, i, 0, who);
        if (d->peak_gbps > 0)
            slope(c, d, i, 1, who);
        for (size_t k = 0; k < d->nroofs; k++) {
            if (!(d->roofs[k].gflops > 0))
                continue;
            peaks |= d->roofs[k].peak_gflops > 0 || d->peak_gbps > 0;
            roof(c, d, i, k, roof_colour(colour++), who);
        }
    }
    for (size_t e = 0; e < r->nextra; e++)
        cli_chart_label(c, r->extra[e].intensity, r->extra[e].gflops, r->extra[e].label, MEMORY_COLOUR);
    cli_chart_series(c, "solid: measured roof", CLI_LINE_PLAIN, CLI_CHART_GREY);
    if (peaks)
        cli_chart_series(c, "dashed: theoretical peak", CLI_LINE_DASHED, CLI_CHART_GREY);
    cli_chart_series(c, "memory bandwidth (the slope)", CLI_LINE_PLAIN, MEMORY_COLOUR);
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
