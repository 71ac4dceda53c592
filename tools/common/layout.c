/*
 * layout.c - a chart laid out for drawing: the title and its subtitle at
 * the top, the footer at the bottom, the legend on the right, the plot
 * area in between with its grid, tick labels and axis titles; then the
 * dashed lines and their notes, the series with their marks, the labelled
 * points. Everything in points from the top left; text is measured by the
 * caller's function (cairo's in the commands, a fixed width in the tests).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN 24.0
#define TITLE_SIZE 20.0
#define SUBTITLE_SIZE 13.5
#define AXIS_TITLE_SIZE 13.0
#define TICK_SIZE 12.0
#define LEGEND_SIZE 12.5
#define NOTE_SIZE 11.5
#define FOOTER_SIZE 11.0
#define POINT_TEXT_SIZE 10.0
#define PANEL_TITLE_SIZE 13.0
#define MAX_BOXES 256    /* notes and point texts kept clear of each other, a panel */
#define PANEL_GAP 36.0   /* between panels: room for the x labels at their edges */
#define PAD 12.0          /* between the frame and the outermost data */
#define MARK_R 4.5
#define SWATCH 28.0       /* a legend entry's sample of its line */

#define INK 0x222222u
#define INK_SOFT 0x555555u
#define GRID 0xD9D9D9u
#define GRID_MINOR 0xEFEFEFu
#define FRAME 0x888888u
#define WHITE 0xFFFFFFu

/* Okabe-Ito, ordered so that a colour and the mark it gets when lines
 * outnumber the colours stay apart (blue and sky blue never share a
 * circle), yellow last; then grey. */
static const uint32_t palette[CLI_CHART_GREY + 1] = {
    0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7, 0xE69F00, 0x000000, 0x56B4E9, 0xF0E442, 0x767676,
};

uint32_t draw_colour(int i)
{
    return palette[i >= 0 && i <= CLI_CHART_GREY ? i : CLI_CHART_GREY];
}

/* A colour for text: the light ones (yellow, sky blue, orange), too pale
 * to read as text on white, darkened, keeping their hue. */
static uint32_t text_colour(uint32_t rgb)
{
    double r = (double)(rgb >> 16 & 0xFF), g = (double)(rgb >> 8 & 0xFF), b = (double)(rgb & 0xFF);
    if (0.2126 * r + 0.7152 * g + 0.0722 * b < 125)
        return rgb;
    return (uint32_t)(r * 0.55) << 16 | (uint32_t)(g * 0.55) << 8 | (uint32_t)(b * 0.55);
}

/* The mark of the series s: the shapes in turn over the series that have
 * points (so that a colour used again comes with another mark). */
static draw_shape shape_of(const cli_chart *c, size_t s)
{
    if (c->series[s].mark >= 0)
        return (draw_shape)c->series[s].mark;
    size_t k = 0;
    for (size_t i = 0; i < s; i++)
        k += c->series[i].style == CLI_LINE_SOLID && c->series[i].n > 0;
    return (draw_shape)(k % DRAW_SHAPES);
}

/* ---- the list ---- */

static draw_item *add(draw_list *l, draw_kind kind, uint32_t rgb, const char *id)
{
    if (l->failed)
        return NULL;
    if (l->n == l->cap) {
        size_t want = l->cap ? 2 * l->cap : 64;
        draw_item *items = realloc(l->items, want * sizeof *items);
        if (!items) {
            l->failed = 1;
            return NULL;
        }
        l->items = items;
        l->cap = want;
    }
    draw_item *it = &l->items[l->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->rgb = rgb;
    /* an id cut short could repeat another: the drawing fails instead */
    if (id && snprintf(it->id, sizeof it->id, "%s%s", l->prefix, id) >= (int)sizeof it->id)
        l->failed = 2;
    return it;
}

static void add_line(draw_list *l, const double *xy, size_t n, uint32_t rgb, double width,
                     int dashed, double offset, int clip, const char *id)
{
    draw_item *it = add(l, DRAW_LINE, rgb, id);
    if (!it)
        return;
    it->xy = malloc(2 * n * sizeof *it->xy);
    if (!it->xy) {
        l->failed = 1;
        return;
    }
    memcpy(it->xy, xy, 2 * n * sizeof *it->xy);
    it->n = n;
    it->width = width;
    it->dashed = dashed;
    it->dash_offset = offset;
    it->clip = clip;
}

static void add_segment(draw_list *l, double x0, double y0, double x1, double y1,
                        uint32_t rgb, double width, const char *id)
{
    double xy[4] = {x0, y0, x1, y1};
    add_line(l, xy, 2, rgb, width, 0, 0, 0, id);
}

static void add_mark(draw_list *l, double x, double y, draw_shape shape, double r, uint32_t rgb,
                     const char *id)
{
    draw_item *it = add(l, DRAW_MARK, rgb, id);
    if (it) {
        it->x = x;
        it->y = y;
        it->r = r;
        it->shape = shape;
        it->width = 1.0;
    }
}

static void add_rect(draw_list *l, double x, double y, double w, double h, int filled,
                     uint32_t fill, uint32_t stroke, double width)
{
    draw_item *it = add(l, DRAW_RECT, stroke, NULL);
    if (it) {
        it->x = x;
        it->y = y;
        it->w = w;
        it->h = h;
        it->filled = filled;
        it->fill = fill;
        it->width = width;
    }
}

static draw_item *add_text(draw_list *l, double x, double y, const char *text, double size,
                           draw_anchor anchor, uint32_t rgb, const char *id)
{
    draw_item *it = add(l, DRAW_TEXT, rgb, id);
    if (!it)
        return NULL;
    it->text = strdup(text ? text : "");
    if (!it->text) {
        l->failed = 1;
        return NULL;
    }
    it->x = x;
    it->y = y;
    it->size = size;
    it->anchor = anchor;
    return it;
}

void draw_list_free(draw_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].xy);
        free(l->items[i].text);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ---- the frame: where data lands ---- */

typedef struct frame {
    const cli_chart *c;
    draw_measure_fn measure;
    void *mctx;
    draw_list *l;
    cli_axis ax[2];
    double left, top, right, bottom; /* the plot area */
    size_t dashes;                   /* dashed lines drawn so far */
    size_t lines, levels, roofs;     /* series with marks, levels, plain lines drawn so far */
    size_t all_lines;                /* series with marks in all */
    int panel;                       /* the panel being drawn */
    double (*box)[4];                /* the panel's notes and point texts so far */
    size_t placed;
} frame;

static double px(const frame *f, double x)
{
    return f->left + PAD + cli_axis_pos(&f->ax[0], x) * (f->right - f->left - 2 * PAD);
}

static double py(const frame *f, double y)
{
    return f->bottom - PAD - cli_axis_pos(&f->ax[1], y) * (f->bottom - f->top - 2 * PAD);
}

static double width_of(const frame *f, const char *text, double size, int bold)
{
    return f->measure(f->mctx, text ? text : "", size, bold);
}

static void tick_label(const frame *f, int which, double v, char *buf, size_t size)
{
    const chart_axis *a = &f->c->axis[which];
    cli_axis_label(buf, size, v, a->unit, a->unit_scale);
}

/* The values along one axis, gathered: the smallest and the largest, or
 * why one cannot be shown. */
typedef struct extent {
    int which, log, any;
    double lo, hi;
    char *why;
    size_t why_size;
} extent;

static int take(extent *e, double v)
{
    if (!isfinite(v) || (e->log && !(v > 0))) {
        snprintf(e->why, e->why_size, "the %s axis cannot show the value %g%s", e->which ? "y" : "x",
                 v, e->log ? " (a logarithmic axis shows values above 0 only)" : "");
        return -1;
    }
    e->lo = e->any && e->lo < v ? e->lo : v;
    e->hi = e->any && e->hi > v ? e->hi : v;
    e->any = 1;
    return 0;
}

/* The smallest and largest value along one axis over every point (and
 * spread) and label; 0 when there is none, -1 (and why) when one cannot be
 * shown. A level has a y but no x. */
static int data_range(const cli_chart *c, int which, double *lo, double *hi, char *why,
                      size_t why_size)
{
    extent e = {which, c->axis[which].scale != CLI_SCALE_LINEAR, 0, 0, 0, why, why_size};
    for (size_t i = 0; i < c->nlabels; i++)
        if (take(&e, which ? c->labels[i].y : c->labels[i].x) != 0)
            return -1;
    for (size_t s = 0; s < c->nseries; s++) {
        const chart_series *se = &c->series[s];
        for (size_t k = 0; k < se->n && !(se->level && !which); k++) {
            if (take(&e, se->xy[2 * k + which]) != 0)
                return -1;
            for (int b = 0; b < 2 && which; b++)
                if (!isnan(se->band[2 * k + b]) && take(&e, se->band[2 * k + b]) != 0)
                    return -1;
        }
    }
    *lo = e.lo;
    *hi = e.hi;
    return e.any;
}

/* text cut to maxw points at the end of a whole character, with an
 * ellipsis, into buf. */
static void fit_text(const frame *f, const char *text, double size, double maxw, char *buf,
                     size_t bufsize)
{
    snprintf(buf, bufsize, "%s", text);
    if (width_of(f, buf, size, 0) <= maxw)
        return;
    size_t n = strlen(buf);
    while (n > 0) {
        do
            n--;
        while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80);
        if (n + 4 > bufsize)
            continue;
        memcpy(buf + n, "\xe2\x80\xa6", 4); /* U+2026 and the NUL */
        if (width_of(f, buf, size, 0) <= maxw)
            return;
    }
}

/* The lines of text wrapped at spaces to maxw points; with emit_id, each
 * as a TEXT from baseline y down, lh apart, its id emit_id-N. Returns the
 * line count. */
static size_t wrap(frame *f, const char *text, double size, double maxw, const char *emit_id,
                   double x, double y, double lh)
{
    int emit = emit_id != NULL;
    size_t lines = 0, len = strlen(text);
    char *buf = malloc(len + 1);
    if (!buf) {
        f->l->failed = 1;
        return 0;
    }
    size_t start = 0;
    while (start < len) {
        size_t end = start, best = 0;
        for (;;) { /* extend by words while the line fits */
            size_t next = end;
            while (next < len && text[next] == ' ')
                next++;
            while (next < len && text[next] != ' ')
                next++;
            memcpy(buf, text + start, next - start);
            buf[next - start] = '\0';
            if (best && width_of(f, buf, size, 0) > maxw)
                break;
            best = end = next;
            if (next >= len)
                break;
        }
        memcpy(buf, text + start, end - start);
        buf[end - start] = '\0';
        if (emit) {
            char id[64]; /* a draw_item's id: emit_id (under 40) and the line number fit */
            snprintf(id, sizeof id, "%s-%zu", emit_id, lines);
            add_text(f->l, x, y + (double)lines * lh, buf, size, DRAW_START, INK_SOFT, id);
        }
        lines++;
        start = end;
        while (start < len && text[start] == ' ')
            start++;
    }
    free(buf);
    return lines;
}

/* ---- the parts ---- */

/* The legend's width: the longest name, its sample, padding; at most 30%
 * of the picture (longer names are cut). 0 without named series. */
static double legend_width(const frame *f)
{
    double w = 0;
    for (size_t s = 0; s < f->c->nseries; s++)
        if (f->c->series[s].name) {
            double tw = width_of(f, f->c->series[s].name, LEGEND_SIZE, 0);
            w = tw > w ? tw : w;
        }
    if (w == 0)
        return 0;
    w += SWATCH + 8 + 2 * 10;
    return w < 0.3 * f->l->width ? w : 0.3 * f->l->width;
}

static void legend(frame *f, double lw)
{
    const cli_chart *c = f->c;
    size_t count = 0;
    for (size_t s = 0; s < c->nseries; s++)
        count += c->series[s].name != NULL;
    if (!count)
        return;
    double x = f->right + 16, y = f->top, row = LEGEND_SIZE * 1.75;
    add_rect(f->l, x, y, lw, 10 + (double)count * row, 1, WHITE, 0xCCCCCC, 1);
    double yy = y + 5 + row / 2;
    for (size_t s = 0, i = 0; s < c->nseries; s++) {
        const chart_series *se = &c->series[s];
        if (!se->name)
            continue;
        uint32_t rgb = draw_colour(se->colour);
        double xy[4] = {x + 10, yy, x + 10 + SWATCH, yy};
        add_line(f->l, xy, 2, rgb, se->style == CLI_LINE_DASHED ? 1.6 : se->style == CLI_LINE_SOLID ? 2.2 : 2.8,
                 se->style == CLI_LINE_DASHED, 0, 0, NULL);
        if (se->style == CLI_LINE_SOLID)
            add_mark(f->l, x + 10 + SWATCH / 2, yy, shape_of(c, s), MARK_R,
                     rgb, NULL);
        char name[256], id[40];
        fit_text(f, se->name, LEGEND_SIZE, lw - SWATCH - 8 - 20, name, sizeof name);
        snprintf(id, sizeof id, "legend-%zu", i++);
        add_text(f->l, x + 10 + SWATCH + 8, yy + LEGEND_SIZE * 0.36, name, LEGEND_SIZE, DRAW_START,
                 INK, id);
        yy += row;
    }
}

/* Grid lines at the ticks (and the faint ones between decades), the tick
 * labels, the frame and the axis titles. */
static void grid(frame *f)
{
    double minor[64];
    for (int a = 0; a < 2; a++) {
        size_t n = cli_axis_minor(&f->ax[a], minor, 64);
        for (size_t i = 0; i < n && i < 64; i++) {
            if (a == 0)
                add_segment(f->l, px(f, minor[i]), f->top, px(f, minor[i]), f->bottom, GRID_MINOR, 1, NULL);
            else
                add_segment(f->l, f->left, py(f, minor[i]), f->right, py(f, minor[i]), GRID_MINOR, 1, NULL);
        }
    }
    /* x labels: every k-th one when they would crowd. */
    double widest = 0;
    char label[64], id[40];
    for (size_t i = 0; i < f->ax[0].nticks; i++) {
        tick_label(f, 0, f->ax[0].tick[i], label, sizeof label);
        double w = width_of(f, label, TICK_SIZE, 0);
        widest = w > widest ? w : widest;
    }
    size_t every = 1;
    while ((widest + 10) * (double)f->ax[0].nticks / (double)every > f->right - f->left)
        every++;
    for (size_t i = 0; i < f->ax[0].nticks; i++) {
        double x = px(f, f->ax[0].tick[i]);
        snprintf(id, sizeof id, "x-tick-%zu", i);
        add_segment(f->l, x, f->top, x, f->bottom + 4, GRID, 1, id);
        if (i % every)
            continue;
        tick_label(f, 0, f->ax[0].tick[i], label, sizeof label);
        snprintf(id, sizeof id, "x-tick-%zu-label", i);
        add_text(f->l, x, f->bottom + 6 + TICK_SIZE, label, TICK_SIZE, DRAW_MIDDLE, INK, id);
    }
    for (size_t i = 0; i < f->ax[1].nticks; i++) {
        double y = py(f, f->ax[1].tick[i]);
        snprintf(id, sizeof id, "y-tick-%zu", i);
        add_segment(f->l, f->left - (f->panel ? 0 : 4), y, f->right, y, GRID, 1, id);
        if (f->panel) /* the first panel's labels serve all */
            continue;
        tick_label(f, 1, f->ax[1].tick[i], label, sizeof label);
        snprintf(id, sizeof id, "y-tick-%zu-label", i);
        add_text(f->l, f->left - 8, y + TICK_SIZE * 0.36, label, TICK_SIZE, DRAW_END, INK, id);
    }
    add_rect(f->l, f->left, f->top, f->right - f->left, f->bottom - f->top, 0, 0, FRAME, 1);
    const char *title = f->c->panel_title[f->panel];
    if (title) {
        char fitted[256]; /* cut to the panel (measured plain: a bold margin) */
        fit_text(f, title, PANEL_TITLE_SIZE, 0.9 * (f->right - f->left), fitted, sizeof fitted);
        draw_item *t = add_text(f->l, (f->left + f->right) / 2, f->top - 8, fitted, PANEL_TITLE_SIZE,
                                DRAW_MIDDLE, INK, "panel-title");
        if (t)
            t->bold = 1;
    }
}

/* The axis titles: across, under every panel; up, left of the first. */
static void axis_titles(frame *f, double left, double right)
{
    const cli_chart *c = f->c;
    add_text(f->l, (left + right) / 2, f->bottom + 6 + TICK_SIZE + 10 + AXIS_TITLE_SIZE,
             c->axis[0].title, AXIS_TITLE_SIZE, DRAW_MIDDLE, INK, "x-title");
    draw_item *t = add_text(f->l, MARGIN + AXIS_TITLE_SIZE, (f->top + f->bottom) / 2,
                            c->axis[1].title, AXIS_TITLE_SIZE, DRAW_MIDDLE, INK, "y-title");
    if (t)
        t->vertical = 1;
}


/* The spread of point i at x: a bar with caps from lo to hi, when it is
 * long enough to see ("spread-L-I"). The bars of the lines stand a little
 * apart, so that those of two lines at one size are told apart. */
static void spread(frame *f, const chart_series *se, size_t i, double x, uint32_t rgb)
{
    if (isnan(se->band[2 * i]))
        return;
    double apart = f->all_lines > 1 && 16.0 / (double)(f->all_lines - 1) < 4 ? 16.0 / (double)(f->all_lines - 1) : 4;
    x += apart * ((double)f->lines - (double)(f->all_lines - 1) / 2); /* at most 8 either side */
    double y0 = py(f, se->band[2 * i]), y1 = py(f, se->band[2 * i + 1]);
    if (y0 - y1 < 1)
        return;
    char id[40];
    snprintf(id, sizeof id, "spread-%zu-%zu", f->lines, i);
    add_segment(f->l, x, y0, x, y1, rgb, 1.2, id);
    add_segment(f->l, x - 3.5, y0, x + 3.5, y0, rgb, 1.2, NULL);
    add_segment(f->l, x - 3.5, y1, x + 3.5, y1, rgb, 1.2, NULL);
}

/* The screen points of series se, with its ends run on to the edge of the
 * plot where it asks (far past it: the line is clipped); *n in, *n out. */
static double *screen_points(const frame *f, const chart_series *se, size_t *count)
{
    size_t n = se->n, at = se->extend[0] && n > 1;
    double *xy = malloc(2 * (n + 2) * sizeof *xy);
    if (!xy)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        xy[2 * (at + i)] = px(f, se->xy[2 * i]);
        xy[2 * (at + i) + 1] = py(f, se->xy[2 * i + 1]);
    }
    const double far = 4 * (f->l->width + f->l->height);
    for (int end = 0; end < 2 && n > 1; end++) {
        if (!se->extend[end])
            continue;
        /* From the second point to the first, or the last but one to the last. */
        size_t a = end ? at + n - 2 : at + 1, b = end ? at + n - 1 : at;
        double dx = xy[2 * b] - xy[2 * a], dy = xy[2 * b + 1] - xy[2 * a + 1];
        double len = sqrt(dx * dx + dy * dy);
        size_t to = end ? at + n : 0;
        xy[2 * to] = xy[2 * b] + (len > 0 ? dx / len * far : 0);
        xy[2 * to + 1] = xy[2 * b + 1] + (len > 0 ? dy / len * far : 0);
    }
    *count = n + at + (se->extend[1] && n > 1);
    return xy;
}

/* A series: its line (clipped to the plot area), then its marks; a level
 * across the plot. Dashes of lines that coincide (two precisions with one
 * peak) alternate, so that both colours show. */
static void series(frame *f, size_t s)
{
    const chart_series *se = &f->c->series[s];
    if (se->n == 0)
        return;
    uint32_t rgb = draw_colour(se->colour);
    int dashed = se->style == CLI_LINE_DASHED, marks = se->style == CLI_LINE_SOLID;
    double width = dashed ? 1.6 : marks ? 2.2 : 2.8;
    double offset = dashed ? 6.0 * (double)(f->dashes++ % 2) : 0;
    char id[40];
    if (se->level) {
        double at[4] = {f->left, py(f, se->xy[1]), f->right, py(f, se->xy[1])};
        snprintf(id, sizeof id, "level-%zu", f->levels++);
        add_line(f->l, at, 2, rgb, width, dashed, offset, 1 + f->panel, se->id[0] ? se->id : id);
        return;
    }
    size_t n = 0;
    double *xy = screen_points(f, se, &n);
    if (!xy) {
        f->l->failed = 1;
        return;
    }
    snprintf(id, sizeof id, "%s-%zu", dashed ? "dashed" : marks ? "line" : "roof",
             dashed ? f->dashes : marks ? f->lines : f->roofs++);
    if (n > 1)
        add_line(f->l, xy, n, rgb, width, dashed, offset, 1 + f->panel, se->id[0] ? se->id : id);
    size_t at = se->extend[0] && se->n > 1; /* the first point's index in xy */
    for (size_t i = 0; i < se->n && marks; i++)
        spread(f, se, i, xy[2 * (at + i)], rgb);
    /* Ids for the tests and for readers of the SVG: "point-L-I", the I-th
     * point of the L-th line with marks. */
    for (size_t i = 0; i < se->n && marks; i++) {
        snprintf(id, sizeof id, "point-%zu-%zu", f->lines, i);
        add_mark(f->l, xy[2 * (at + i)], xy[2 * (at + i) + 1], shape_of(f->c, s), MARK_R, rgb, id);
    }
    f->lines += marks;
    free(xy);
}

/* True when box b (x0, y0, x1, y1) overlaps none of the n in boxes. */
static int clear_of(const double b[4], double (*boxes)[4], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(b[0] >= boxes[i][2] || b[2] <= boxes[i][0] || b[1] >= boxes[i][3] || b[3] <= boxes[i][1]))
            return 0;
    return 1;
}

/* The texts beside the points of the lines with marks ("point-L-I-text"):
 * right of and below each mark, else left of and above it, else (it would
 * cover a note or another text) left out. */
static void point_texts(frame *f)
{
    size_t line = 0;
    for (size_t s = 0; s < f->c->nseries; s++) {
        const chart_series *se = &f->c->series[s];
        if (se->style != CLI_LINE_SOLID || se->n == 0)
            continue;
        for (size_t i = 0; i < se->n && f->placed < MAX_BOXES && se->panel == f->panel; i++) {
            if (!se->text[i])
                continue;
            double x = px(f, se->xy[2 * i]), y = py(f, se->xy[2 * i + 1]);
            double w = width_of(f, se->text[i], POINT_TEXT_SIZE, 0), h = POINT_TEXT_SIZE;
            double right[4] = {x + 5, y + 4, x + 5 + w, y + 4 + h};
            double left[4] = {x - 5 - w, y - 4 - h, x - 5, y - 4};
            double *b = right[2] < f->right && clear_of(right, f->box, f->placed) ? right
                        : left[0] > f->left && clear_of(left, f->box, f->placed) ? left
                                                                            : NULL;
            if (!b)
                continue;
            memcpy(f->box[f->placed++], b, sizeof right);
            char id[48];
            snprintf(id, sizeof id, "point-%zu-%zu-text", line, i);
            draw_item *t = add_text(f->l, b[0], b[3] - 1, se->text[i], POINT_TEXT_SIZE, DRAW_START,
                                    text_colour(draw_colour(se->colour)), id);
            if (t)
                t->halo = 1;
        }
        line++;
    }
}

/* x moved past each placed box that the note [x, x + w] with its baseline
 * at y would overlap, to the right (dir 1) or the left (-1); 0 when it
 * then leaves [lo, hi]. */
static int shift(double (*box)[4], size_t placed, double *x, double y, double w, int dir, double lo,
                 double hi)
{
    for (size_t i = 0; i < placed; i++) {
        int apart = *x >= box[i][2] || *x + w <= box[i][0] || y <= box[i][1] || y - NOTE_SIZE >= box[i][3];
        if (!apart) {
            *x = dir > 0 ? box[i][2] + 12 : box[i][0] - 12 - w;
            i = (size_t)-1; /* check them all again */
        }
    }
    return *x >= lo && *x + w <= hi;
}

/* The notes of this panel's series above their first point (below it
 * when there is no room above, or the series asks; at the right edge, and
 * moved left, when it asks), moved right past the notes placed before;
 * when that runs past the plot, on the other side of the line, else
 * against the edge (a note at the right edge is then left out). */
static void notes(frame *f)
{
    for (size_t s = 0; s < f->c->nseries; s++) {
        const chart_series *se = &f->c->series[s];
        if (!se->note || se->n == 0 || se->panel != f->panel)
            continue;
        double w = width_of(f, se->note, NOTE_SIZE, 0), limit = f->right - 4;
        int dir = se->note_at & CLI_NOTE_END ? -1 : 1;
        double x0 = dir < 0 ? limit - w : (se->level ? f->left : px(f, se->xy[0])) + 4;
        double yl = py(f, se->xy[1]);
        double side[2] = {yl - 5, yl + NOTE_SIZE + 8}; /* above, below */
        int first = (se->note_at & CLI_NOTE_BELOW) != 0;
        if (side[first] - NOTE_SIZE < f->top + 2 || side[first] > f->bottom - 2)
            first = !first; /* no room there */
        double x = x0, y = side[first];
        if (!shift(f->box, f->placed, &x, y, w, dir, f->left + 4, limit)) {
            double x2 = x0, y2 = side[!first];
            int fits = y2 - NOTE_SIZE >= f->top + 2 && y2 <= f->bottom - 2;
            if (fits && shift(f->box, f->placed, &x2, y2, w, dir, f->left + 4, limit)) {
                x = x2;
                y = y2;
            } else if (dir < 0) {
                continue;
            } else {
                x = limit - w;
            }
        }
        if (f->placed < MAX_BOXES) {
            double b[4] = {x, y - NOTE_SIZE, x + w, y + 2};
            memcpy(f->box[f->placed++], b, sizeof b);
        }
        char id[40];
        snprintf(id, sizeof id, "note-%zu", s);
        draw_item *t = add_text(f->l, x, y, se->note, NOTE_SIZE, DRAW_START,
                                text_colour(draw_colour(se->colour)), id);
        if (t)
            t->halo = 1;
    }
}

static void labels(frame *f)
{
    for (size_t i = 0; i < f->c->nlabels; i++) {
        const chart_label *lb = &f->c->labels[i];
        if (lb->panel != f->panel)
            continue;
        double x = px(f, lb->x), y = py(f, lb->y);
        uint32_t rgb = draw_colour(lb->colour);
        char id[40];
        snprintf(id, sizeof id, "label-%zu", i);
        add_mark(f->l, x, y, DRAW_RING, 6.0, rgb, id);
        double w = width_of(f, lb->text, NOTE_SIZE, 0);
        int left = x + 10 + w > f->right - 4;
        snprintf(id, sizeof id, "label-%zu-text", i);
        draw_item *t = add_text(f->l, left ? x - 10 : x + 10, y + NOTE_SIZE * 0.36, lb->text,
                                NOTE_SIZE, left ? DRAW_END : DRAW_START, text_colour(rgb), id);
        if (t)
            t->halo = 1;
    }
}

/* One panel: its grid, lines (dashed, then plain, then with marks),
 * the notes, the texts by the points, the labelled points. */
static void panel(frame *f)
{
    if (!f->box)
        return; /* out of memory: the list says so */
    grid(f);
    static const cli_line_style order[] = {CLI_LINE_DASHED, CLI_LINE_PLAIN, CLI_LINE_SOLID};
    for (size_t k = 0; k < 3; k++)
        for (size_t s = 0; s < f->c->nseries; s++)
            if (f->c->series[s].style == order[k] && f->c->series[s].panel == f->panel)
                series(f, s);
    f->placed = 0;
    notes(f);
    point_texts(f);
    labels(f);
}

/* Title, subtitle, footer; the plot area between them and the legend. */
static void frame_out(frame *f, double lw)
{
    const cli_chart *c = f->c;
    double W = f->l->width, H = f->l->height, lh = FOOTER_SIZE * 1.4;
    draw_item *t = add_text(f->l, MARGIN, MARGIN + TITLE_SIZE * 0.8, c->title, TITLE_SIZE,
                            DRAW_START, INK, "title");
    if (t)
        t->bold = 1;
    double y = MARGIN + TITLE_SIZE * 0.8;
    if (c->subtitle) {
        y += SUBTITLE_SIZE + 8;
        add_text(f->l, MARGIN, y, c->subtitle, SUBTITLE_SIZE, DRAW_START, INK_SOFT, "subtitle");
    }
    f->top = y + 18;
    for (size_t i = 0; i < c->npanels; i++)
        if (c->panel_title[i]) {
            f->top += PANEL_TITLE_SIZE + 8;
            break;
        }
    size_t lines = 0;
    for (size_t i = 0; i < c->nfooter; i++)
        lines += wrap(f, c->footer[i], FOOTER_SIZE, W - 2 * MARGIN, NULL, 0, 0, lh);
    double fy = H - MARGIN - (double)(lines ? lines - 1 : 0) * lh;
    for (size_t i = 0, done = 0; i < c->nfooter; i++) {
        char id[40];
        snprintf(id, sizeof id, "footer-%zu", i);
        done += wrap(f, c->footer[i], FOOTER_SIZE, W - 2 * MARGIN, id, MARGIN, fy + (double)done * lh, lh);
    }
    double below = (lines ? (double)lines * lh + 10 : 0) + AXIS_TITLE_SIZE + 10 + TICK_SIZE + 6 + 8;
    f->bottom = H - MARGIN - below;
    double widest = 0;
    char label[64];
    for (size_t i = 0; i < f->ax[1].nticks; i++) {
        tick_label(f, 1, f->ax[1].tick[i], label, sizeof label);
        double w = width_of(f, label, TICK_SIZE, 0);
        widest = w > widest ? w : widest;
    }
    f->left = MARGIN + AXIS_TITLE_SIZE + 12 + widest + 8;
    f->right = W - MARGIN - (lw > 0 ? lw + 16 : 0);
}

int draw_layout(const cli_chart *c, draw_measure_fn measure, void *ctx, draw_list *out,
                char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    out->width = CLI_CHART_WIDTH;
    out->height = CLI_CHART_HEIGHT;
    if (c->failed) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    frame f = {c, measure, ctx, out, {{0}}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0};
    double lo[2] = {0, 0}, hi[2] = {0, 0};
    for (int a = 0; a < 2; a++) {
        int got = data_range(c, a, &lo[a], &hi[a], why, why_size);
        if (got < 0)
            return -1;
        if (got == 0) {
            snprintf(why, why_size, "nothing to draw: no point was measured");
            return -1;
        }
        if (cli_axis_fit(&f.ax[a], c->axis[a].scale, lo[a], hi[a], a ? 10 : 12) != 0) {
            snprintf(why, why_size, "the %s axis cannot show %g to %g", a ? "y" : "x", lo[a], hi[a]);
            return -1;
        }
    }
    add_rect(out, 0, 0, out->width, out->height, 1, WHITE, 0, 0);
    for (size_t s = 0; s < c->nseries; s++)
        f.all_lines += c->series[s].style == CLI_LINE_SOLID && c->series[s].n > 0;
    double lw = legend_width(&f);
    frame_out(&f, lw);
    /* The panels side by side, PANEL_GAP apart, each as wide. */
    double left = f.left, right = f.right, np = (double)c->npanels;
    f.box = malloc(MAX_BOXES * sizeof *f.box);
    if (!f.box)
        out->failed = 1;
    double w = (right - left - (np - 1) * PANEL_GAP) / np;
    for (size_t p = 0; p < c->npanels; p++) {
        f.panel = (int)p;
        f.left = left + (double)p * (w + PANEL_GAP);
        f.right = f.left + w;
        double area[4] = {f.left, f.top, w, f.bottom - f.top};
        memcpy(out->panels[p], area, sizeof area);
        if (p)
            snprintf(out->prefix, sizeof out->prefix, "panel-%d-", (int)p % 10);
        panel(&f);
    }
    free(f.box);
    out->prefix[0] = '\0';
    out->npanels = c->npanels;
    memcpy(out->area, out->panels[0], sizeof out->area);
    f.right = right;
    axis_titles(&f, left, right);
    legend(&f, lw);
    if (out->failed) {
        snprintf(why, why_size, "%s", out->failed == 2 ? "internal error: an element id too long for the drawing"
                                                       : "out of memory");
        draw_list_free(out);
        return -1;
    }
    return 0;
}
