/*
 * draw.h - a chart laid out: the list of things to draw, in the order they
 * are drawn, in points from the top left corner. chart.c makes it (the
 * layout, given a way to measure text) and writes it as SVG; plot_cairo.c
 * draws it with cairo (PNG, PDF) and measures text. Between chart.h and
 * plot.h; the commands never see it.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_DRAW_H
#define GPUPROBE_CLI_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "chart.h"

typedef enum draw_kind {
    DRAW_LINE = 0, /* a polyline through xy[0..2n) */
    DRAW_MARK = 1, /* a mark of shape at (x, y), radius r */
    DRAW_RECT = 2, /* a rectangle (x, y, w, h): filled and/or outlined */
    DRAW_TEXT = 3, /* text with its baseline at (x, y), anchored by anchor */
} draw_kind;

typedef enum draw_shape {
    DRAW_CIRCLE = 0,
    DRAW_SQUARE = 1,
    DRAW_TRIANGLE = 2,
    DRAW_DIAMOND = 3,
    DRAW_TRIANGLE_DOWN = 4,
    DRAW_RING = 5, /* a labelled point: an open circle */
} draw_shape;
#define DRAW_SHAPES 5 /* the shapes series cycle through (not the ring) */

typedef enum draw_anchor { DRAW_START = 0, DRAW_MIDDLE = 1, DRAW_END = 2 } draw_anchor;

/* The font every text uses (DejaVu Sans, Debian's default, then the
 * viewer's sans-serif). */
#define DRAW_FONT "DejaVu Sans"

typedef struct draw_item {
    draw_kind kind;
    uint32_t rgb;        /* stroke, text or mark colour, 0xRRGGBB */
    uint32_t fill;       /* RECT: fill colour; filled says whether */
    int filled;
    double width;        /* stroke width (LINE, RECT: 0 is none; MARK: its white rim) */
    int dashed;          /* LINE: dashes of 7 on, 5 off ... */
    double dash_offset;  /* ... starting this far into the pattern */
    int clip;            /* LINE: clipped to the plot area of panel clip - 1 (0: not) */
    size_t n;            /* LINE: points in xy */
    double *xy;
    double x, y, w, h, r;
    draw_shape shape;
    double size;         /* TEXT: font size */
    int bold;
    draw_anchor anchor;
    int vertical;        /* TEXT: turned a quarter anticlockwise about (x, y) */
    int halo;            /* TEXT: on a white rim (over lines) */
    char *text;
    char id[64];         /* SVG: the element's id, or "" (points, ticks) */
} draw_item;

/* The chart itself, as chart.c keeps it (laid out by layout.c). */
typedef struct chart_series {
    char *name;          /* NULL: not in the legend */
    char *note;
    cli_line_style style;
    int level;           /* a level: one point, whose x is none */
    int colour;
    double *xy;          /* the points, x and y in turn */
    double *band;        /* each point's spread, lo and hi in turn (NaN: none) */
    char **text;         /* each point's text, or NULL */
    int extend[2];       /* runs on before its first point, after its last */
    char id[32];         /* its line's SVG id, or "" for the default */
    int panel;
    int mark;            /* its marks' shape, or -1: in turn */
    int note_at;         /* CLI_NOTE_BELOW, CLI_NOTE_END */
    size_t n, cap;
} chart_series;

typedef struct chart_label {
    double x, y;
    char *text;
    int colour;
    int panel;
} chart_label;

typedef struct chart_axis {
    cli_scale scale;
    char *title, *unit;
    double unit_scale;
} chart_axis;

struct cli_chart {
    char *title, *subtitle;
    char **footer;
    size_t nfooter;
    chart_axis axis[2];
    chart_series *series;
    size_t nseries;
    chart_label *labels;
    size_t nlabels;
    char *panel_title[CLI_CHART_MAX_PANELS];
    size_t npanels;      /* 1 .. CLI_CHART_MAX_PANELS */
    int panel;           /* where series go now */
    int failed; /* an allocation failed: drawing says "out of memory" */
};

typedef struct draw_list {
    double width, height;
    double area[4];      /* the (first) plot area: x, y, w, h (the clip of LINEs) */
    double panels[CLI_CHART_MAX_PANELS][4]; /* each panel's plot area, area first */
    size_t npanels;
    char prefix[16];     /* put before the ids of the items added now */
    draw_item *items;
    size_t n, cap;
    int failed;          /* 1: out of memory somewhere; 2: an id too long for its item (a bug): draw nothing */
} draw_list;

/* Width in points of text in the font at size (bold or not). */
typedef double (*draw_measure_fn)(void *ctx, const char *text, double size, int bold);

/* Lay c out into *out (emptied first). Returns 0, or -1 with why: nothing
 * to draw (no series has a point), a value an axis cannot show, out of
 * memory. */
int draw_layout(const cli_chart *c, draw_measure_fn measure, void *ctx, draw_list *out,
                char *why, size_t why_size);
void draw_list_free(draw_list *l);

/* The list as an SVG document (malloc'd, *len bytes); text stays text and
 * every point is a group with its id. Returns 0, or -1 when out of memory. */
int draw_svg(const draw_list *l, const char *title, char **data, size_t *len);

/* 0xRRGGBB of palette colour i (0 .. CLI_CHART_GREY). */
uint32_t draw_colour(int i);

#endif
