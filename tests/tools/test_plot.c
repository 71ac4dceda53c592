/*
 * test_plot.c - unit tests of the commands' pictures (tools/common): the
 * axis arithmetic (ranges, ticks, labels, positions), the chart and its
 * layout (where points, ticks, levels, notes and the legend land, measured
 * with a fixed-width font so that no drawing library is needed), the SVG
 * writer, the formats by extension, and drawing through cairo where the
 * build has it (and the refusal where it has not).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "cli.h"
#include "draw.h"

/* ---- axes ---- */

static void assert_ticks(const cli_axis *a, const double *want, size_t n)
{
    if (a->nticks != n) {
        for (size_t i = 0; i < a->nticks; i++)
            print_message("tick %zu: %g\n", i, a->tick[i]);
        fail_msg("%zu ticks, expected %zu", a->nticks, n);
    }
    for (size_t i = 0; i < n; i++)
        if (fabs(a->tick[i] - want[i]) > 1e-9 * fabs(want[i]) + 1e-12)
            fail_msg("tick %zu is %.17g, expected %g", i, a->tick[i], want[i]);
}

static void log10_axis_whole_decades(void **state)
{
    (void)state;
    cli_axis a;
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 42, 900000, 10), 0);
    assert_true(a.lo == 10 && a.hi == 1e6);
    assert_ticks(&a, (double[]){10, 100, 1000, 1e4, 1e5, 1e6}, 6);
    /* Values that are decades are their own bounds, despite the rounding
     * of log10(). */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 1000, 1e6, 10), 0);
    assert_true(a.lo == 1000 && a.hi == 1e6);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 1e-3, 0.1, 10), 0);
    assert_true(fabs(a.lo - 1e-3) < 1e-18 && fabs(a.hi - 0.1) < 1e-15);
}

static void log10_axis_short_ranges_get_2_and_5(void **state)
{
    (void)state;
    cli_axis a;
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 200, 500, 10), 0);
    assert_true(a.lo == 100 && a.hi == 1000);
    assert_ticks(&a, (double[]){100, 200, 500, 1000}, 4);
    /* One value that is a decade: a decade on either side. */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 100, 100, 10), 0);
    assert_ticks(&a, (double[]){10, 20, 50, 100, 200, 500, 1000}, 7);
    /* One that is not: the decade it lies in. */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 300, 300, 10), 0);
    assert_true(a.lo == 100 && a.hi == 1000);
}

static void log10_axis_many_decades_thinned(void **state)
{
    (void)state;
    cli_axis a;
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 1e-3, 1e12, 8), 0);
    assert_true(a.nticks <= 8 && a.nticks >= 5);
    assert_true(fabs(a.tick[0] - 1e-3) < 1e-18);
    for (size_t i = 1; i < a.nticks; i++) /* every second decade */
        assert_true(fabs(a.tick[i] / a.tick[i - 1] - 100) < 1e-9);
}

static void log2_axis_powers_of_two(void **state)
{
    (void)state;
    cli_axis a;
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, 64, 8192, 12), 0);
    assert_ticks(&a, (double[]){64, 128, 256, 512, 1024, 2048, 4096, 8192}, 8);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, 100, 5000, 12), 0);
    assert_true(a.lo == 64 && a.hi == 8192);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, 64, 64, 12), 0);
    assert_ticks(&a, (double[]){32, 64, 128}, 3);
    /* 41 powers, 12 labels at most: every fourth. */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, 1, 1099511627776.0, 12), 0);
    assert_int_equal(a.nticks, 11);
    assert_true(a.tick[1] == 16 && a.tick[10] == 1099511627776.0);
}

static void linear_axis_nice_steps(void **state)
{
    (void)state;
    cli_axis a;
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 0, 97, 10), 0);
    assert_ticks(&a, (double[]){0, 20, 40, 60, 80, 100}, 6);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 0.1, 0.35, 10), 0);
    assert_ticks(&a, (double[]){0.1, 0.15, 0.2, 0.25, 0.3, 0.35}, 6);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, -5, 5, 10), 0);
    assert_ticks(&a, (double[]){-6, -4, -2, 0, 2, 4, 6}, 7);
    assert_true(a.tick[3] == 0 && !signbit(a.tick[3]));
    /* A single value, and a few ticks at most. */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 3, 3, 10), 0);
    assert_true(a.lo < 3 && a.hi > 3 && a.nticks >= 2);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 0, 97, 3), 0);
    assert_true(a.nticks <= 3 && a.lo <= 0 && a.hi >= 97);
}

static void axis_refuses_what_it_cannot_show(void **state)
{
    (void)state;
    cli_axis a = {CLI_SCALE_LINEAR, 1, 2, 0, {0}};
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 0, 10, 10), -1);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, -1, 10, 10), -1);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 1, NAN, 10), -1);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 1, INFINITY, 10), -1);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 2, 1, 10), -1);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 1, 2, 1), -1);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 1e-320, 1, 10), -1);
    assert_int_equal(cli_axis_fit(&a, (cli_scale)7, 1, 2, 10), -1);
    assert_true(a.lo == 1 && a.hi == 2); /* unchanged */
}

static void axis_positions(void **state)
{
    (void)state;
    cli_axis a;
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, 64, 8192, 12), 0);
    assert_true(fabs(cli_axis_pos(&a, 64)) < 1e-12);
    assert_true(fabs(cli_axis_pos(&a, 8192) - 1) < 1e-12);
    assert_true(fabs(cli_axis_pos(&a, 512) - 3.0 / 7) < 1e-12);
    assert_true(cli_axis_pos(&a, 0) < -1e8);
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LINEAR, 0, 97, 10), 0);
    assert_true(fabs(cli_axis_pos(&a, 25) - 0.25) < 1e-12);
    assert_true(cli_axis_pos(&a, 200) > 1);
}

static void axis_minor_lines(void **state)
{
    (void)state;
    cli_axis a;
    double m[64];
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 10, 1000, 10), 0);
    /* 2 to 9 of two decades, without the labelled 2 and 5. */
    assert_int_equal(cli_axis_minor(&a, m, 64), 12);
    assert_true(m[0] == 30 && m[5] == 90 && m[6] == 300);
    assert_int_equal(cli_axis_minor(&a, m, 2), 12); /* counted, not written past max */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG10, 1, 1e9, 10), 0);
    assert_int_equal(cli_axis_minor(&a, m, 64), 0); /* too many decades */
    assert_int_equal(cli_axis_fit(&a, CLI_SCALE_LOG2, 64, 8192, 12), 0);
    assert_int_equal(cli_axis_minor(&a, m, 64), 0);
}

static void axis_labels(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *unit;
        double scale;
        const char *want;
    } t[] = {
        {1000, "FLOP/s", 1e9, "1 TFLOP/s"},       {250, "FLOP/s", 1e9, "250 GFLOP/s"},
        {1500, "FLOP/s", 1e9, "1.5 TFLOP/s"},     {66900, "FLOP/s", 1e9, "66.9 TFLOP/s"},
        {999.7, "FLOP/s", 1e9, "1 TFLOP/s"},      {0, "FLOP/s", 1e9, "0 FLOP/s"},
        {0.5, "FLOP/s", 1e9, "500 MFLOP/s"},      {1e6, "FLOP/s", 1e9, "1 PFLOP/s"},
        {2e-6, "s", 1, "2 \xc2\xb5s"},            {1e30, "B", 1, "1e+12 EB"},
        {8192, NULL, 1, "8192"},                  {0.25, NULL, 1, "0.25"},
        {1.5e9, NULL, 1, "1.5e+09"},              {1e7, NULL, 1, "1e+07"},
        {9999999, NULL, 1, "9999999"},            {-64, NULL, 1, "-64"},
    };
    char b[64];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        cli_axis_label(b, sizeof b, t[i].v, t[i].unit, t[i].scale);
        if (strcmp(b, t[i].want) != 0)
            fail_msg("%g %s: got '%s', expected '%s'", t[i].v, t[i].unit ? t[i].unit : "", b, t[i].want);
    }
    char small[4];
    cli_axis_label(small, sizeof small, 1000, "FLOP/s", 1e9);
    assert_string_equal(small, "1 T");
}

/* ---- the layout, with a font whose every character is 0.6 em wide ---- */

static double fixed_width(void *ctx, const char *text, double size, int bold)
{
    (void)ctx;
    (void)bold;
    return 0.6 * size * (double)strlen(text);
}

static const draw_item *find(const draw_list *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].id, id) == 0)
            return &l->items[i];
    return NULL;
}

/* c laid out into *l, which must work. */
static void lay_out(const cli_chart *c, draw_list *l)
{
    char why[128];
    if (draw_layout(c, fixed_width, NULL, l, why, sizeof why) != 0)
        fail_msg("layout failed: %s", why);
}

/* A sweep-like chart: two lines (GFLOP/s against n), a level, a label. */
static cli_chart *sweep_chart(void)
{
    cli_chart *c = cli_chart_create();
    assert_non_null(c);
    cli_chart_title(c, "Throughput", "a machine, measured 2025-01-01");
    cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG2, "n", NULL, 1);
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "Throughput", "FLOP/s", 1e9);
    int a = cli_chart_series(c, "CPU fp32", CLI_LINE_SOLID, 0);
    cli_chart_point(c, a, 64, 10);
    cli_chart_point(c, a, 128, 20);
    cli_chart_point(c, a, 256, 40);
    cli_chart_level(c, 100, 0, "peak 100 GFLOP/s");
    int b = cli_chart_series(c, "GPU fp32", CLI_LINE_SOLID, 1);
    cli_chart_point(c, b, 64, 1000);
    cli_chart_point(c, b, 256, 10000);
    cli_chart_level(c, 100, 1, "peak 100 GFLOP/s"); /* the same peak: notes apart */
    cli_chart_label(c, 128, 500, "decode", 2);
    cli_chart_footer(c, "settings: each point the median of the timed runs");
    return c;
}

static void layout_puts_points_on_their_ticks(void **state)
{
    (void)state;
    cli_chart *c = sweep_chart();
    draw_list l;
    lay_out(c, &l);
    /* x: 64 .. 256 in powers of two; y: 10 .. 10^4 GFLOP/s in decades. */
    const draw_item *x64 = find(&l, "x-tick-0"), *x256 = find(&l, "x-tick-2");
    const draw_item *y10 = find(&l, "y-tick-0"), *y10k = find(&l, "y-tick-3");
    assert_non_null(x64);
    assert_non_null(x256);
    assert_non_null(y10);
    assert_non_null(y10k);
    assert_string_equal(find(&l, "x-tick-0-label")->text, "64");
    assert_string_equal(find(&l, "y-tick-0-label")->text, "10 GFLOP/s");
    assert_string_equal(find(&l, "y-tick-3-label")->text, "10 TFLOP/s");
    assert_null(find(&l, "y-tick-4"));
    const draw_item *p00 = find(&l, "point-0-0"), *p02 = find(&l, "point-0-2");
    const draw_item *p10 = find(&l, "point-1-0"), *p11 = find(&l, "point-1-1");
    assert_non_null(p00);
    assert_non_null(p11);
    assert_null(find(&l, "point-0-3"));
    assert_null(find(&l, "point-2-0")); /* levels have no marks */
    assert_true(fabs(p00->x - x64->xy[0]) < 1e-9 && fabs(p00->y - y10->xy[1]) < 1e-9);
    assert_true(fabs(p02->x - x256->xy[0]) < 1e-9);
    assert_true(fabs(p10->x - x64->xy[0]) < 1e-9);
    assert_true(fabs(p11->y - y10k->xy[1]) < 1e-9);
    /* 20 GFLOP/s lies log10(2) of a decade above 10. */
    const draw_item *p01 = find(&l, "point-0-1");
    assert_true(fabs((y10->xy[1] - p01->y) / (y10->xy[1] - find(&l, "y-tick-1")->xy[1]) - log10(2)) < 1e-9);
    /* Every point and label lies inside the plot area (the legend's marks
     * lie outside it). */
    for (size_t i = 0; i < l.n; i++)
        if (l.items[i].kind == DRAW_MARK && l.items[i].id[0]) {
            assert_true(l.items[i].x > l.area[0] && l.items[i].x < l.area[0] + l.area[2]);
            assert_true(l.items[i].y > l.area[1] && l.items[i].y < l.area[1] + l.area[3]);
        }
    draw_list_free(&l);
    cli_chart_destroy(c);
}

static void layout_levels_notes_legend(void **state)
{
    (void)state;
    cli_chart *c = sweep_chart();
    draw_list l;
    lay_out(c, &l);
    /* A level crosses the whole plot area, at its value. */
    const draw_item *lv = find(&l, "level-0"), *y100 = find(&l, "y-tick-1");
    assert_non_null(lv);
    assert_int_equal(lv->n, 2);
    assert_true(lv->dashed && lv->clip);
    assert_true(lv->xy[0] == l.area[0] && lv->xy[2] == l.area[0] + l.area[2]);
    assert_true(fabs(lv->xy[1] - y100->xy[1]) < 1e-9);
    /* Two levels on one value: dashes that alternate, notes side by side. */
    const draw_item *lv1 = find(&l, "level-1");
    assert_true(lv1->dash_offset != lv->dash_offset);
    const draw_item *n0 = NULL, *n1 = NULL;
    for (size_t i = 0; i < l.n; i++)
        if (strncmp(l.items[i].id, "note-", 5) == 0)
            *(n0 ? &n1 : &n0) = &l.items[i];
    assert_non_null(n1);
    assert_true(n0->halo && n1->halo);
    assert_true(n1->x >= n0->x + fixed_width(NULL, n0->text, n0->size, 0));
    /* The legend names the two lines, in order; the label has its ring. */
    assert_string_equal(find(&l, "legend-0")->text, "CPU fp32");
    assert_string_equal(find(&l, "legend-1")->text, "GPU fp32");
    assert_null(find(&l, "legend-2"));
    assert_int_equal(find(&l, "label-0")->shape, DRAW_RING);
    assert_string_equal(find(&l, "label-0-text")->text, "decode");
    assert_string_equal(find(&l, "title")->text, "Throughput");
    assert_string_equal(find(&l, "subtitle")->text, "a machine, measured 2025-01-01");
    draw_list_free(&l);
    cli_chart_destroy(c);
}

static void layout_cuts_long_names_and_wraps_the_footer(void **state)
{
    (void)state;
    cli_chart *c = cli_chart_create();
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "y", "B", 1);
    int s = cli_chart_series(c, "a name far too long for any legend: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", CLI_LINE_SOLID, 0);
    cli_chart_point(c, s, 1, 1);
    char foot[600];
    memset(foot, 0, sizeof foot);
    for (size_t i = 0; i + 6 < sizeof foot; i += 6)
        memcpy(foot + i, "words ", 6);
    cli_chart_footer(c, foot);
    draw_list l;
    lay_out(c, &l);
    const draw_item *name = find(&l, "legend-0");
    size_t len = strlen(name->text);
    assert_true(len < 60);
    assert_memory_equal(name->text + len - 3, "\xe2\x80\xa6", 3);
    size_t lines = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.items[i].kind == DRAW_TEXT && l.items[i].size == 11.0) {
            lines++;
            assert_true(fixed_width(NULL, l.items[i].text, 11.0, 0) <= l.width - 48);
        }
    assert_true(lines >= 3);
    draw_list_free(&l);
    cli_chart_destroy(c);
}

static void layout_single_point(void **state)
{
    (void)state;
    cli_chart *c = cli_chart_create();
    cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG2, "n", NULL, 1);
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "y", "FLOP/s", 1e9);
    int s = cli_chart_series(c, "one", CLI_LINE_SOLID, 0);
    cli_chart_point(c, s, 512, 42);
    draw_list l;
    lay_out(c, &l);
    const draw_item *p = find(&l, "point-0-0");
    assert_non_null(p);
    /* The middle of a range an octave either side of it. */
    assert_true(fabs(p->x - (l.area[0] + l.area[2] / 2)) < 1e-9);
    assert_null(find(&l, "line-0")); /* one point: no line */
    draw_list_free(&l);
    cli_chart_destroy(c);
}

static void layout_refuses_empty_and_impossible_charts(void **state)
{
    (void)state;
    char why[128];
    draw_list l;
    cli_chart *c = cli_chart_create();
    assert_int_equal(draw_layout(c, fixed_width, NULL, &l, why, sizeof why), -1);
    assert_string_equal(why, "nothing to draw: no point was measured");
    cli_chart_series(c, "key only", CLI_LINE_DASHED, CLI_CHART_GREY);
    cli_chart_level(c, 5, 0, "a level alone");
    assert_int_equal(draw_layout(c, fixed_width, NULL, &l, why, sizeof why), -1);
    assert_string_equal(why, "nothing to draw: no point was measured");
    assert_int_equal(l.n, 0);
    cli_chart_destroy(c);

    c = cli_chart_create();
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "y", NULL, 1);
    int s = cli_chart_series(c, "zero", CLI_LINE_SOLID, 0);
    cli_chart_point(c, s, 1, 0);
    assert_int_equal(draw_layout(c, fixed_width, NULL, &l, why, sizeof why), -1);
    assert_non_null(strstr(why, "the y axis cannot show the value 0"));
    cli_chart_destroy(c);

    c = cli_chart_create();
    s = cli_chart_series(c, "nan", CLI_LINE_SOLID, 0);
    cli_chart_point(c, s, NAN, 1);
    assert_int_equal(draw_layout(c, fixed_width, NULL, &l, why, sizeof why), -1);
    assert_non_null(strstr(why, "the x axis cannot show"));
    c->failed = 1; /* as after an allocation that failed */
    assert_int_equal(draw_layout(c, fixed_width, NULL, &l, why, sizeof why), -1);
    assert_string_equal(why, "out of memory");
    cli_chart_destroy(c);
    cli_chart_destroy(NULL);
    assert_int_equal(cli_chart_series(NULL, "x", CLI_LINE_SOLID, 0), -1);
    cli_chart_point(NULL, 0, 1, 1);
}

/* ---- SVG ---- */

static void svg_keeps_text_as_quoted_text(void **state)
{
    (void)state;
    cli_chart *c = sweep_chart();
    cli_chart_title(c, "a <b> & \"c\" \x1b[31m", NULL);
    int s = cli_chart_series(c, "name\xff", CLI_LINE_SOLID, 2);
    cli_chart_point(c, s, 100, 100);
    draw_list l;
    char why[128], *svg = NULL;
    size_t len = 0;
    assert_int_equal(draw_layout(c, fixed_width, NULL, &l, why, sizeof why), 0);
    assert_int_equal(draw_svg(&l, c->title, &svg, &len), 0);
    assert_int_equal(strlen(svg), len);
    assert_non_null(strstr(svg, "<title>a &lt;b&gt; &amp; &quot;c&quot; \\x1b[31m</title>"));
    assert_non_null(strstr(svg, ">name\\xff</text>"));
    assert_null(strchr(svg, '\x1b'));
    assert_non_null(strstr(svg, "<g id=\"point-0-0\" transform=\"translate("));
    assert_non_null(strstr(svg, "<text id=\"y-tick-1-label\""));
    assert_non_null(strstr(svg, "stroke-dasharray=\"7 5\""));
    assert_non_null(strstr(svg, "clip-path=\"url(#plot-area)\""));
    assert_memory_equal(svg + len - 7, "</svg>\n", 7);
    free(svg);
    draw_list_free(&l);
    cli_chart_destroy(c);
}

/* ---- formats, and drawing ---- */

static void formats_by_extension(void **state)
{
    (void)state;
    assert_int_equal(cli_plot_format_of("sweep.png"), CLI_PLOT_PNG);
    assert_int_equal(cli_plot_format_of("docs/A.SVG"), CLI_PLOT_SVG);
    assert_int_equal(cli_plot_format_of("x.Pdf"), CLI_PLOT_PDF);
    static const char *bad[] = {".png", "dir/.svg", "x.gif", "png", "x.png/", "x.pngx", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_plot_format_of(bad[i]) != -1)
            fail_msg("'%s' was taken for a format", bad[i]);
    assert_int_equal(cli_plot_format_of(NULL), -1);
}

static void drawing_with_cairo_or_refused_without(void **state)
{
    (void)state;
    cli_chart *c = sweep_chart();
    char why[256], *data = NULL;
    size_t len = 0;
    if (!cli_plot_available()) {
        assert_int_equal(cli_plot_render(c, CLI_PLOT_PNG, &data, &len, why, sizeof why), -1);
        assert_null(data);
        assert_non_null(strstr(why, "without cairo"));
        cli_chart_destroy(c);
        return;
    }
    static const struct {
        cli_plot_format f;
        const char *start;
        size_t n;
    } t[] = {{CLI_PLOT_PNG, "\x89PNG\r\n\x1a\n", 8}, {CLI_PLOT_SVG, "<?xml", 5}, {CLI_PLOT_PDF, "%PDF-", 5}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(cli_plot_render(c, t[i].f, &data, &len, why, sizeof why), 0);
        assert_true(len > 1000);
        assert_memory_equal(data, t[i].start, t[i].n);
        if (t[i].f == CLI_PLOT_PNG) { /* IHDR: 1920 x 1200 */
            assert_memory_equal(data + 12, "IHDR\0\0\x07\x80\0\0\x04\xb0", 12);
        }
        free(data);
    }
    cli_chart *empty = cli_chart_create();
    assert_int_equal(cli_plot_render(empty, CLI_PLOT_PDF, &data, &len, why, sizeof why), -1);
    assert_null(data);
    assert_string_equal(why, "nothing to draw: no point was measured");
    cli_chart_destroy(empty);
    cli_chart_destroy(c);
}


/* ---- panels, plain lines, point texts, notes at the end ---- */

/* Two panels of one point each, at the same values. */
static cli_chart *two_panels(void)
{
    cli_chart *c = cli_chart_create();
    cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG10, "x", NULL, 1);
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "y", "FLOP/s", 1e9);
    assert_int_equal(cli_chart_panel(c, "left"), 0);
    int a = cli_chart_series(c, "a", CLI_LINE_SOLID, 0);
    cli_chart_point(c, a, 10, 100);
    cli_chart_point(c, a, 100, 1000);
    assert_int_equal(cli_chart_panel(c, "right"), 1);
    int b = cli_chart_series(c, NULL, CLI_LINE_SOLID, 1);
    cli_chart_point(c, b, 10, 100);
    cli_chart_label(c, 100, 1000, "operating point", 5);
    return c;
}

static void layout_panels_share_axes(void **state)
{
    (void)state;
    cli_chart *c = two_panels();
    draw_list l;
    lay_out(c, &l);
    assert_int_equal(l.npanels, 2);
    const double *p0 = l.panels[0], *p1 = l.panels[1];
    assert_true(p1[0] > p0[0] + p0[2]);              /* side by side */
    assert_true(p0[1] == p1[1] && p0[3] == p1[3]);   /* as high */
    assert_true(fabs(p0[2] - p1[2]) < 1e-9);         /* as wide */
    /* The same value lands at the same place in each. */
    const draw_item *a = find(&l, "point-0-0"), *b = find(&l, "panel-1-point-1-0");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(fabs((a->x - p0[0]) - (b->x - p1[0])) < 1e-9 && a->y == b->y);
    /* Each panel has its x ticks and title; the y labels are the first's. */
    assert_non_null(find(&l, "x-tick-0-label"));
    assert_non_null(find(&l, "panel-1-x-tick-0-label"));
    assert_non_null(find(&l, "y-tick-0-label"));
    assert_null(find(&l, "panel-1-y-tick-0-label"));
    assert_string_equal(find(&l, "panel-title")->text, "left");
    assert_string_equal(find(&l, "panel-1-panel-title")->text, "right");
    /* The labelled point is in the second panel; lines clip to their own. */
    const draw_item *ring = find(&l, "panel-1-label-0");
    assert_non_null(ring);
    assert_true(ring->x > p1[0] && ring->x < p1[0] + p1[2]);
    assert_int_equal(find(&l, "line-0")->clip, 1);
    char *svg = NULL;
    size_t len = 0;
    assert_int_equal(draw_svg(&l, "t", &svg, &len), 0);
    assert_non_null(strstr(svg, "<clipPath id=\"plot-area-1\">"));
    free(svg);
    draw_list_free(&l);
    /* No more panels than CLI_CHART_MAX_PANELS. */
    for (int i = 2; i < CLI_CHART_MAX_PANELS; i++)
        assert_int_equal(cli_chart_panel(c, "more"), i);
    assert_int_equal(cli_chart_panel(c, "too many"), -1);
    cli_chart_destroy(c);
}

static void layout_plain_lines_run_on_and_texts_keep_apart(void **state)
{
    (void)state;
    cli_chart *c = cli_chart_create();
    cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG10, "x", NULL, 1);
    cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "y", NULL, 1);
    int roof = cli_chart_series(c, NULL, CLI_LINE_PLAIN, 0);
    cli_chart_point(c, roof, 10, 100);
    cli_chart_point(c, roof, 20, 100);
    cli_chart_extend(c, roof, 0, 1);
    cli_chart_note_at(c, roof, CLI_NOTE_END);
    cli_chart_note(c, roof, "roof 100");
    int s = cli_chart_series(c, "points", CLI_LINE_SOLID, 1);
    cli_chart_id(c, s, "my points!");
    cli_chart_point(c, s, 1, 1);
    cli_chart_point_text(c, s, "n=1");
    cli_chart_point(c, s, 1, 1); /* the same place: its text is left out */
    cli_chart_point_text(c, s, "n=2");
    cli_chart_point(c, s, 1, 10000); /* the roof in the middle: room above it */
    draw_list l;
    lay_out(c, &l);
    const draw_item *r = find(&l, "roof-0");
    assert_non_null(r);
    assert_int_equal(r->n, 3); /* its two points, then on past the right edge */
    assert_true(r->xy[4] > l.area[0] + l.area[2] && r->xy[5] == r->xy[1]);
    /* A plain line has no marks, nor does it count among the lines that do. */
    assert_non_null(find(&l, "point-0-0"));
    assert_null(find(&l, "point-1-0"));
    assert_non_null(find(&l, "mypoints")); /* the id, without what ids cannot hold */
    assert_string_equal(find(&l, "point-0-0-text")->text, "n=1");
    assert_null(find(&l, "point-0-1-text"));
    /* The note at the right end, above the line. */
    const draw_item *n = find(&l, "note-0");
    assert_non_null(n);
    double w = fixed_width(NULL, n->text, n->size, 0);
    assert_true(fabs(n->x + w - (l.area[0] + l.area[2] - 4)) < 1e-9 && n->y < r->xy[1]);
    draw_list_free(&l);
    cli_chart_destroy(c);
}

/* ---- the roofline ---- */

static void roofline_arithmetic(void **state)
{
    (void)state;
    assert_true(cli_roof_matmul_bytes(16, 4, 4) == 3072);    /* fp32: 12 n^2 */
    assert_true(cli_roof_matmul_bytes(16, 2, 4) == 2048);    /* fp16: 8 n^2 */
    assert_true(cli_roof_matmul_bytes(16, 8, 8) == 6144);    /* fp64: 24 n^2 */
    assert_true(cli_roof_ridge(1000, 100) == 10);
    assert_true(cli_roof_ridge(1000, 0) == 0 && cli_roof_ridge(0, 100) == 0);
    assert_true(cli_roof_attainable(1000, 100, 2) == 200);   /* on the slope */
    assert_true(cli_roof_attainable(1000, 100, 50) == 1000); /* under the roof */
    assert_true(cli_roof_attainable(1000, 0, 2) == 1000);    /* no slope */
}

static void roofline_draws_panels_roofs_and_operating_points(void **state)
{
    (void)state;
    static const cli_roof_point cpu_pts[] = {{64, 49152, 20}, {128, 196608, 40}, {256, 786432, 60}};
    static const cli_roof_point gpu_pts[] = {{1024, 12582912, 50000}};
    const cli_roof cpu_roofs[] = {{"fp32", 60, 256, 200, cpu_pts, 3}};
    const cli_roof gpu_roofs[] = {{"fp32", 50000, 1024, 67000, gpu_pts, 1},
                                  {"bf16", 600000, 1024, 989000, gpu_pts, 1},
                                  {"fp16", 0, 0, 989000, NULL, 0}}; /* not measured: not drawn */
    const cli_roof_device devs[] = {{"cpu", "A CPU", 20, 0, cpu_roofs, 1},
                                    {"cuda:0", "A GPU", 4000, 4800, gpu_roofs, 3}};
    const cli_roof_extra extra[] = {{1, 1.0, 3000, "decode"}, {1, 300, 400000, "prefill"}};
    const cli_roofline r = {devs, 2, extra, 2};
    cli_chart *c = cli_chart_create();
    cli_roofline_draw(c, &r);
    draw_list l;
    lay_out(c, &l);
    assert_int_equal(l.npanels, 2);
    /* Each slope ends where its highest roof starts: at that ridge. */
    const draw_item *m0 = find(&l, "memory-0"), *r0 = find(&l, "roof-0-0");
    assert_non_null(m0);
    assert_non_null(r0);
    assert_true(fabs(m0->xy[2 * m0->n - 2] - r0->xy[0]) < 1e-6 && fabs(m0->xy[2 * m0->n - 1] - r0->xy[1]) < 1e-6);
    const draw_item *m1 = find(&l, "panel-1-memory-1"), *bf = find(&l, "panel-1-roof-1-1");
    const draw_item *fp = find(&l, "panel-1-roof-1-0");
    assert_true(fabs(m1->xy[2 * m1->n - 2] - bf->xy[0]) < 1e-6);
    /* The lower roof starts on the slope: the three points in a line. */
    double sx = m1->xy[2 * m1->n - 2] - m1->xy[2 * m1->n - 4], sy = m1->xy[2 * m1->n - 1] - m1->xy[2 * m1->n - 3];
    double fx = fp->xy[0] - m1->xy[2 * m1->n - 4], fy = fp->xy[1] - m1->xy[2 * m1->n - 3];
    assert_true(fabs(sx * fy - sy * fx) < 1e-6 * (sx * sx + sy * sy));
    assert_null(find(&l, "panel-1-roof-1-2"));
    assert_non_null(find(&l, "panel-1-peak-1-1"));
    assert_non_null(find(&l, "panel-1-memory-peak-1"));
    assert_null(find(&l, "memory-peak-0")); /* no memory peak known */
    /* The operating points: rings with their labels in the GPU's panel. */
    assert_string_equal(find(&l, "panel-1-label-0-text")->text, "decode");
    assert_string_equal(find(&l, "panel-1-label-1-text")->text, "prefill");
    assert_true(find(&l, "panel-1-label-0")->shape == DRAW_RING);
    /* A precision is named in the legend once; the points say their n. */
    size_t fp32 = 0;
    for (size_t i = 0; i < l.n; i++)
        fp32 += l.items[i].kind == DRAW_TEXT && strncmp(l.items[i].id, "legend-", 7) == 0 &&
                strcmp(l.items[i].text, "fp32") == 0;
    assert_int_equal(fp32, 1);
    assert_string_equal(find(&l, "point-0-0-text")->text, "n=64");
    draw_list_free(&l);
    cli_chart_destroy(c);
    /* The JSON: one entry per device, the ridges. */
    struct json_object *j = cli_roofline_json(&r);
    const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    assert_non_null(strstr(text, "\"ridge\":3,"));   /* 60 / 20 */
    assert_non_null(strstr(text, "\"ridge\":12.5,"));  /* 50000 / 4000 */
    assert_non_null(strstr(text, "\"ridge\":null,"));  /* fp16: no roof */
    json_object_put(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(log10_axis_whole_decades),
        cmocka_unit_test(log10_axis_short_ranges_get_2_and_5),
        cmocka_unit_test(log10_axis_many_decades_thinned),
        cmocka_unit_test(log2_axis_powers_of_two),
        cmocka_unit_test(linear_axis_nice_steps),
        cmocka_unit_test(axis_refuses_what_it_cannot_show),
        cmocka_unit_test(axis_positions),
        cmocka_unit_test(axis_minor_lines),
        cmocka_unit_test(axis_labels),
        cmocka_unit_test(layout_puts_points_on_their_ticks),
        cmocka_unit_test(layout_levels_notes_legend),
        cmocka_unit_test(layout_cuts_long_names_and_wraps_the_footer),
        cmocka_unit_test(layout_single_point),
        cmocka_unit_test(layout_refuses_empty_and_impossible_charts),
        cmocka_unit_test(layout_panels_share_axes),
        cmocka_unit_test(layout_plain_lines_run_on_and_texts_keep_apart),
        cmocka_unit_test(roofline_arithmetic),
        cmocka_unit_test(roofline_draws_panels_roofs_and_operating_points),
        cmocka_unit_test(svg_keeps_text_as_quoted_text),
        cmocka_unit_test(formats_by_extension),
        cmocka_unit_test(drawing_with_cairo_or_refused_without),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
