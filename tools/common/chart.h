/*
 * chart.h - a chart the commands fill with data and plot.h draws: two axes
 * (linear or logarithmic, units in their titles and tick labels), series
 * (lines with points, or dashed lines for peaks and roofs), labelled
 * points, a legend, a title with a subtitle (the device names and the
 * date), and a footer (the measurement settings). Above axis.h and text.h:
 * no drawing library here, so that the layout (chart.c) is tested without
 * one.
 *
 *     cli_chart *c = cli_chart_create();
 *     cli_chart_title(c, "Matrix multiply throughput by size", "NVIDIA H200, 2025-06-01");
 *     cli_chart_axis(c, CLI_CHART_X, CLI_SCALE_LOG2, "Matrix size n", NULL, 1);
 *     cli_chart_axis(c, CLI_CHART_Y, CLI_SCALE_LOG10, "Throughput", "FLOP/s", 1e9);
 *     int s = cli_chart_series(c, "H200 fp32", CLI_LINE_SOLID, 0);
 *     cli_chart_point(c, s, 1024, 41000.0);
 *     ...
 *     cli_plot_write(c, "sweep.png", why, sizeof why);      (plot.h)
 *     cli_chart_destroy(c);
 *
 * Every text is quoted with cli_quote() as it is stored (control bytes and
 * invalid UTF-8 become visible escapes), as all text output is. A call
 * that runs out of memory marks the chart, and drawing it then fails with
 * "out of memory", as the JSON builders do.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_CHART_H
#define GPUPROBE_CLI_CHART_H

#include <stddef.h>

#include "axis.h"

typedef struct cli_chart cli_chart;

enum { CLI_CHART_X = 0, CLI_CHART_Y = 1 };

typedef enum cli_line_style {
    CLI_LINE_SOLID = 0,  /* a line through the points, each marked */
    CLI_LINE_DASHED = 1, /* a dashed line, no marks: a peak, a roof */
    CLI_LINE_PLAIN = 2,  /* a solid line, no marks: a measured roof */
} cli_line_style;

/* Colours: the Okabe-Ito palette, which readers with any common colour
 * vision deficiency tell apart (blue, vermillion, bluish green, reddish
 * purple, orange, black, sky blue, yellow), each line with points also
 * with a mark of its own shape (five shapes in turn); CLI_CHART_GREY for
 * notes and keys. Text in the pale ones is darkened. */
#define CLI_CHART_COLOURS 8
#define CLI_CHART_GREY CLI_CHART_COLOURS

/* The most panels a chart has (cli_chart_panel()). */
#define CLI_CHART_MAX_PANELS 4

/* The size of every picture, in points (SVG and PDF) and in pixels at
 * 1x (PNG is drawn at 2x): 16:10, for a README or a slide. */
#define CLI_CHART_WIDTH 960.0
#define CLI_CHART_HEIGHT 600.0

/* A new, empty chart (both axes linear, untitled); NULL when out of memory. */
cli_chart *cli_chart_create(void);
void cli_chart_destroy(cli_chart *c); /* NULL is fine */

/* The title (bold, top left) and a line under it (NULL: none). */
void cli_chart_title(cli_chart *c, const char *title, const char *subtitle);
/* One more paragraph of the footer (small, grey, wrapped to the width). */
void cli_chart_footer(cli_chart *c, const char *text);
/* An axis: its scale, its title ("Matrix size n"), and the unit of its
 * tick labels: values times unit_scale are written with an SI prefix and
 * the unit ("1 TFLOP/s" for 1000 with unit "FLOP/s" and unit_scale 1e9),
 * or as plain numbers with unit NULL. */
void cli_chart_axis(cli_chart *c, int which, cli_scale scale, const char *title,
                    const char *unit, double unit_scale);

/* A panel: the series and labelled points added after this call are drawn
 * in a plot area of their own, titled title, beside those of the panels
 * before it; every panel shows the same ranges on both axes (the y tick
 * labels left of the first), so that they compare at a glance. The first
 * call titles the first panel. A chart without it has one, untitled.
 * Returns the panel's index, or -1 past CLI_CHART_MAX_PANELS (the series
 * then stay in the last one). */
int cli_chart_panel(cli_chart *c, const char *title);

/* A series in colour colour (0 .. CLI_CHART_GREY); name in the legend
 * (NULL: none, as for a peak whose solid line is already there). Returns
 * its index, or -1 when out of memory (then its points are ignored). A
 * named series without points still shows in the legend: a key. */
int cli_chart_series(cli_chart *c, const char *name, cli_line_style style, int colour);
/* A point of series s, in data units; points are joined in the order given. */
void cli_chart_point(cli_chart *c, int s, double x, double y);
/* A short text beside the last point of series s ("n=4096"); a text
 * that would overlap one placed before is left out. */
void cli_chart_point_text(cli_chart *c, int s, const char *text);
/* Let series s run on past its first point (start) and its last one (end)
 * in the direction of its first and last segments, to the edge of the
 * plot: a roof's slope from the left edge, its flat part to the right
 * one. Those ends do not widen the axes. */
void cli_chart_extend(cli_chart *c, int s, int start, int end);
/* The mark of series s's points, 0 .. 4 (circle, square, triangle,
 * diamond, triangle pointing down); by default the shapes in turn over
 * the lines with marks. */
void cli_chart_mark(cli_chart *c, int s, int mark);
/* Where series s's note goes: by default above its first point; below
 * it (for a line that rises to the right from there), at the right edge of
 * the plot (for a flat line that starts where others do), or both. */
enum { CLI_NOTE_BELOW = 1, CLI_NOTE_END = 2 };
void cli_chart_note_at(cli_chart *c, int s, int where);
/* The SVG id of series s's line (letters, digits and '-', at most 31
 * bytes; by default "line-L", "dashed-J" or "roof-J" by kind and order). */
void cli_chart_id(cli_chart *c, int s, const char *id);
/* A note written along series s, above its first point ("fp32 peak 67
 * TFLOP/s"); notes that would overlap are moved apart. */
void cli_chart_note(cli_chart *c, int s, const char *text);
/* The spread of the last point of series s: a bar from lo to hi (the
 * slowest and the fastest of the runs behind a median). */
void cli_chart_spread(cli_chart *c, int s, double lo, double hi);
/* A level: a dashed line across the whole plot at y (a peak), in colour,
 * with a note at its left end. */
void cli_chart_level(cli_chart *c, double y, int colour, const char *note);
/* A labelled point (an operating point): a ring at (x, y) and its text. */
void cli_chart_label(cli_chart *c, double x, double y, const char *text, int colour);

#endif
