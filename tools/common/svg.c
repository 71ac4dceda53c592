/*
 * svg.c - a laid-out chart as an SVG document, written here rather than by
 * cairo's SVG surface, which draws every letter as an outline: here text
 * stays text (searchable, selectable, read by screen readers and by the
 * tests), and each point is a group with an id whose transform is where it
 * sits ("point-S-I": series S, point I), as each tick is ("y-tick-I").
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "draw.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) CLI_PRINTF(2, 3);
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t want = b->cap ? b->cap : 4096;
        while (want - b->len <= (size_t)n)
            want *= 2;
        char *q = realloc(b->p, want);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = want;
    }
}

/* Text as XML character data or an attribute value. The chart's texts are
 * quoted already (valid UTF-8, no control bytes), so only the markup
 * characters need escaping. */
static void put_text(sbuf *b, const char *s)
{
    while (s && *s) {
        size_t plain = strcspn(s, "&<>\"'");
        put(b, "%.*s", (int)plain, s);
        s += plain;
        switch (*s) {
        case '&': put(b, "&amp;"); break;
        case '<': put(b, "&lt;"); break;
        case '>': put(b, "&gt;"); break;
        case '"': put(b, "&quot;"); break;
        case '\'': put(b, "&apos;"); break;
        default: return;
        }
        s++;
    }
}

static void put_id(sbuf *b, const draw_item *it)
{
    if (it->id[0])
        put(b, " id=\"%s\"", it->id);
}

/* The outline of a mark of radius r about (0, 0), as a path. */
static void put_shape(sbuf *b, draw_shape shape, double r)
{
    double a = 0.9 * r, t = 1.15 * r, d = 1.3 * r;
    switch (shape) {
    case DRAW_SQUARE:
        put(b, "<path d=\"M%.2f %.2fH%.2fV%.2fH%.2fZ\"", -a, -a, a, a, -a);
        break;
    case DRAW_TRIANGLE:
        put(b, "<path d=\"M0 %.2fL%.2f %.2fL%.2f %.2fZ\"", -t, t, 0.65 * t, -t, 0.65 * t);
        break;
    case DRAW_TRIANGLE_DOWN:
        put(b, "<path d=\"M0 %.2fL%.2f %.2fL%.2f %.2fZ\"", t, t, -0.65 * t, -t, -0.65 * t);
        break;
    case DRAW_DIAMOND:
        put(b, "<path d=\"M0 %.2fL%.2f 0L0 %.2fL%.2f 0Z\"", -d, d, d, -d);
        break;
    default:
        put(b, "<circle r=\"%.2f\"", r);
    }
}

static void put_item(sbuf *b, const draw_item *it)
{
    switch (it->kind) {
    case DRAW_LINE:
        put(b, "<polyline");
        put_id(b, it);
        put(b, " points=\"");
        for (size_t i = 0; i < it->n; i++)
            put(b, "%s%.2f,%.2f", i ? " " : "", it->xy[2 * i], it->xy[2 * i + 1]);
        put(b, "\" fill=\"none\" stroke=\"#%06X\" stroke-width=\"%.2f\" stroke-linejoin=\"round\"",
            (unsigned)it->rgb, it->width);
        if (it->dashed)
            put(b, " stroke-dasharray=\"7 5\" stroke-dashoffset=\"%.2f\"", it->dash_offset);
        if (it->clip == 1)
            put(b, " clip-path=\"url(#plot-area)\"");
        else if (it->clip > 1)
            put(b, " clip-path=\"url(#plot-area-%d)\"", it->clip - 1);
        put(b, "/>\n");
        break;
    case DRAW_MARK:
        put(b, "<g");
        put_id(b, it);
        put(b, " transform=\"translate(%.2f %.2f)\">", it->x, it->y);
        put_shape(b, it->shape, it->r);
        if (it->shape == DRAW_RING)
            put(b, " fill=\"#FFFFFF\" stroke=\"#%06X\" stroke-width=\"2\"/></g>\n", (unsigned)it->rgb);
        else
            put(b, " fill=\"#%06X\" stroke=\"#FFFFFF\" stroke-width=\"%.2f\"/></g>\n",
                (unsigned)it->rgb, it->width);
        break;
    case DRAW_RECT:
        put(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", it->x, it->y, it->w, it->h);
        if (it->filled)
            put(b, " fill=\"#%06X\"", (unsigned)it->fill);
        else
            put(b, " fill=\"none\"");
        if (it->width > 0)
            put(b, " stroke=\"#%06X\" stroke-width=\"%.2f\"", (unsigned)it->rgb, it->width);
        put(b, "/>\n");
        break;
    case DRAW_TEXT:
        if (it->halo) { /* the white rim: the same text, stroked, under it */
            draw_item rim = *it;
            rim.halo = 0;
            rim.id[0] = '\0';
            rim.rgb = 0xFFFFFF;
            put(b, "<g stroke=\"#FFFFFF\" stroke-width=\"3\" stroke-linejoin=\"round\">");
            put_item(b, &rim);
            put(b, "</g>\n");
        }
        put(b, "<text");
        put_id(b, it);
        put(b, " x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" fill=\"#%06X\"", it->x, it->y, it->size,
            (unsigned)it->rgb);
        if (it->bold)
            put(b, " font-weight=\"bold\"");
        if (it->anchor != DRAW_START)
            put(b, " text-anchor=\"%s\"", it->anchor == DRAW_MIDDLE ? "middle" : "end");
        if (it->vertical)
            put(b, " transform=\"rotate(-90 %.2f %.2f)\"", it->x, it->y);
        put(b, ">");
        put_text(b, it->text);
        put(b, "</text>\n");
        break;
    }
}

int draw_svg(const draw_list *l, const char *title, char **data, size_t *len)
{
    sbuf b = {NULL, 0, 0, 0};
    put(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\""
            " viewBox=\"0 0 %.0f %.0f\" font-family=\"%s, Verdana, Arial, sans-serif\">\n",
        l->width, l->height, l->width, l->height, DRAW_FONT);
    put(&b, "<title>");
    put_text(&b, title);
    put(&b, "</title>\n<defs>");
    for (size_t p = 0; p < l->npanels || p == 0; p++) {
        const double *a = p ? l->panels[p] : l->area;
        put(&b, "<clipPath id=\"plot-area");
        if (p)
            put(&b, "-%zu", p);
        put(&b, "\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/></clipPath>", a[0], a[1],
            a[2], a[3]);
    }
    put(&b, "</defs>\n");
    for (size_t i = 0; i < l->n; i++)
        put_item(&b, &l->items[i]);
    put(&b, "</svg>\n");
    if (b.failed) {
        free(b.p);
        return -1;
    }
    *data = b.p;
    *len = b.len;
    return 0;
}
