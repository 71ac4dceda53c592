/*
 * plot_cairo.c - drawing with cairo: text measured for the layout in every
 * format, and the laid-out chart drawn as PNG (an image surface at twice
 * the size, written to memory) or PDF (a stream surface, text kept as
 * text); SVG is written by svg.c from the same layout.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "draw.h"
#include "plot.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PNG_SCALE 2.0
#define PI 3.14159265358979323846

int cli_plot_available(void)
{
    return 1;
}

/* The same metrics at every size and on every surface: no hinting. */
static void set_font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, DRAW_FONT, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static void no_hinting(cairo_t *cr)
{
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
}

static double measure(void *ctx, const char *text, double size, int bold)
{
    cairo_t *cr = ctx;
    cairo_text_extents_t e;
    set_font(cr, size, bold);
    cairo_text_extents(cr, text, &e);
    return e.x_advance;
}

static void colour(cairo_t *cr, uint32_t rgb)
{
    cairo_set_source_rgb(cr, (double)((rgb >> 16) & 0xFF) / 255.0,
                         (double)((rgb >> 8) & 0xFF) / 255.0, (double)(rgb & 0xFF) / 255.0);
}

/* The outline of a mark, as svg.c draws it. */
static void shape(cairo_t *cr, draw_shape s, double x, double y, double r)
{
    double a = 0.9 * r, t = 1.15 * r, d = 1.3 * r;
    cairo_new_path(cr);
    switch (s) {
    case DRAW_SQUARE:
        cairo_rectangle(cr, x - a, y - a, 2 * a, 2 * a);
        break;
    case DRAW_TRIANGLE:
    case DRAW_TRIANGLE_DOWN: {
        double k = s == DRAW_TRIANGLE ? 1 : -1;
        cairo_move_to(cr, x, y - k * t);
        cairo_line_to(cr, x + t, y + k * 0.65 * t);
        cairo_line_to(cr, x - t, y + k * 0.65 * t);
        cairo_close_path(cr);
        break;
    }
    case DRAW_DIAMOND:
        cairo_move_to(cr, x, y - d);
        cairo_line_to(cr, x + d, y);
        cairo_line_to(cr, x, y + d);
        cairo_line_to(cr, x - d, y);
        cairo_close_path(cr);
        break;
    default:
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, r, 0, 2 * PI);
    }
}

static void line(cairo_t *cr, const draw_list *l, const draw_item *it)
{
    cairo_save(cr);
    if (it->clip) {
        const double *a = it->clip > 1 && (size_t)(it->clip - 1) < l->npanels ? l->panels[it->clip - 1] : l->area;
        cairo_rectangle(cr, a[0], a[1], a[2], a[3]);
        cairo_clip(cr);
    }
    cairo_new_path(cr);
    for (size_t i = 0; i < it->n; i++)
        cairo_line_to(cr, it->xy[2 * i], it->xy[2 * i + 1]);
    static const double dashes[] = {7, 5};
    if (it->dashed)
        cairo_set_dash(cr, dashes, 2, it->dash_offset);
    cairo_set_line_width(cr, it->width);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    colour(cr, it->rgb);
    cairo_stroke(cr);
    cairo_restore(cr);
}

static void text(cairo_t *cr, const draw_item *it)
{
    set_font(cr, it->size, it->bold);
    cairo_text_extents_t e;
    cairo_text_extents(cr, it->text, &e);
    double dx = it->anchor == DRAW_MIDDLE ? e.x_advance / 2 : it->anchor == DRAW_END ? e.x_advance : 0;
    cairo_save(cr);
    cairo_translate(cr, it->x, it->y);
    if (it->vertical)
        cairo_rotate(cr, -PI / 2);
    cairo_move_to(cr, -dx, 0);
    if (it->halo) { /* a white rim, so that lines under the text do not cross it */
        cairo_text_path(cr, it->text);
        colour(cr, 0xFFFFFF);
        cairo_set_line_width(cr, 3);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        cairo_stroke(cr);
        cairo_move_to(cr, -dx, 0);
    }
    colour(cr, it->rgb);
    cairo_show_text(cr, it->text);
    cairo_restore(cr);
}

static void item(cairo_t *cr, const draw_list *l, const draw_item *it)
{
    switch (it->kind) {
    case DRAW_LINE:
        line(cr, l, it);
        break;
    case DRAW_MARK:
        shape(cr, it->shape, it->x, it->y, it->r);
        colour(cr, it->shape == DRAW_RING ? 0xFFFFFF : it->rgb);
        cairo_fill_preserve(cr);
        colour(cr, it->shape == DRAW_RING ? it->rgb : 0xFFFFFF);
        cairo_set_line_width(cr, it->shape == DRAW_RING ? 2 : it->width);
        cairo_stroke(cr);
        break;
    case DRAW_RECT:
        cairo_rectangle(cr, it->x, it->y, it->w, it->h);
        if (it->filled) {
            colour(cr, it->fill);
            cairo_fill_preserve(cr);
        }
        if (it->width > 0) {
            colour(cr, it->rgb);
            cairo_set_line_width(cr, it->width);
            cairo_stroke(cr);
        }
        cairo_new_path(cr);
        break;
    case DRAW_TEXT:
        text(cr, it);
        break;
    }
}

/* ---- output into memory ---- */

typedef struct sink {
    char *p;
    size_t len, cap;
} sink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
    sink *s = closure;
    if (s->cap - s->len < length) {
        size_t want = s->cap ? s->cap : 65536;
        while (want - s->len < length)
            want *= 2;
        char *q = realloc(s->p, want);
        if (!q)
            return CAIRO_STATUS_WRITE_ERROR;
        s->p = q;
        s->cap = want;
    }
    memcpy(s->p + s->len, data, length);
    s->len += length;
    return CAIRO_STATUS_SUCCESS;
}

/* The list drawn on a new surface of format f, written into *out. */
static cairo_status_t draw_on(const draw_list *l, const char *title, cli_plot_format f, sink *out)
{
    cairo_surface_t *s;
    if (f == CLI_PLOT_PNG)
        s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)(l->width * PNG_SCALE),
                                       (int)(l->height * PNG_SCALE));
    else
        s = cairo_pdf_surface_create_for_stream(sink_write, out, l->width, l->height);
    if (f == CLI_PLOT_PDF) {
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, title ? title : "");
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "libgpuprobe");
    }
    cairo_t *cr = cairo_create(s);
    no_hinting(cr);
    if (f == CLI_PLOT_PNG)
        cairo_scale(cr, PNG_SCALE, PNG_SCALE);
    for (size_t i = 0; i < l->n; i++)
        item(cr, l, &l->items[i]);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS && f == CLI_PLOT_PNG)
        st = cairo_surface_write_to_png_stream(s, sink_write, out);
    cairo_surface_finish(s); /* the PDF is written out here */
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    return st;
}

/* cairo and fontconfig keep the fonts they found for the life of the
 * process; a command draws once, so both are let go after each picture,
 * when no cairo object is left (a process that draws exits clean under
 * leak checkers, and the next picture finds its fonts again). */
static void release_fonts(void)
{
    cairo_debug_reset_static_data();
    FcFini();
}

int cli_plot_draws(int format)
{
    return format >= CLI_PLOT_PNG && format <= CLI_PLOT_PDF;
}

int cli_plot_render(const cli_chart *c, cli_plot_format f, char **data, size_t *len, char *why,
                    size_t why_size)
{
    *data = NULL;
    *len = 0;
    /* A context to measure text with, for the layout of every format. */
    cairo_surface_t *scratch = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
    cairo_t *m = cairo_create(scratch);
    no_hinting(m);
    draw_list l;
    int rc = -1;
    if (cairo_status(m) != CAIRO_STATUS_SUCCESS) {
        snprintf(why, why_size, "cairo: %s", cairo_status_to_string(cairo_status(m)));
        memset(&l, 0, sizeof l);
    } else if (draw_layout(c, measure, m, &l, why, why_size) == 0) {
        if (f == CLI_PLOT_SVG) {
            rc = draw_svg(&l, c->title, data, len);
            if (rc != 0)
                snprintf(why, why_size, "out of memory");
        } else {
            sink out = {NULL, 0, 0};
            cairo_status_t st = draw_on(&l, c->title, f, &out);
            if (st == CAIRO_STATUS_SUCCESS) {
                *data = out.p;
                *len = out.len;
                rc = 0;
            } else {
                free(out.p);
                snprintf(why, why_size, "cairo: %s", cairo_status_to_string(st));
            }
        }
    }
    draw_list_free(&l);
    cairo_destroy(m);
    cairo_surface_destroy(scratch);
    release_fonts();
    return rc;
}
