/*
 * chart.c - the chart the commands fill: title, footer, axes, series,
 * points, notes and labelled points, every text quoted as it is stored.
 * An allocation that fails marks the chart; drawing it then fails.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "draw.h"
#include "text.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A quoted copy of s (NULL for NULL); marks c when out of memory. */
static char *keep(cli_chart *c, const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s), need = cli_quote(NULL, 0, s, len) + 1;
    char *q = malloc(need);
    if (!q) {
        c->failed = 1;
        return NULL;
    }
    cli_quote(q, need, s, len);
    return q;
}

cli_chart *cli_chart_create(void)
{
    cli_chart *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < 2; i++) {
        c->axis[i].scale = CLI_SCALE_LINEAR;
        c->axis[i].unit_scale = 1;
    }
    c->npanels = 1;
    return c;
}

void cli_chart_destroy(cli_chart *c)
{
    if (!c)
        return;
    free(c->title);
    free(c->subtitle);
    for (size_t i = 0; i < c->nfooter; i++)
        free(c->footer[i]);
    free(c->footer);
    for (int i = 0; i < 2; i++) {
        free(c->axis[i].title);
        free(c->axis[i].unit);
    }
    for (size_t i = 0; i < c->nseries; i++) {
        free(c->series[i].name);
        free(c->series[i].note);
        free(c->series[i].xy);
        free(c->series[i].band);
        for (size_t k = 0; k < c->series[i].n; k++)
            free(c->series[i].text[k]);
        free(c->series[i].text);
    }
    free(c->series);
    for (size_t i = 0; i < c->nlabels; i++)
        free(c->labels[i].text);
    free(c->labels);
    for (size_t i = 0; i < CLI_CHART_MAX_PANELS; i++)
        free(c->panel_title[i]);
    free(c);
}

void cli_chart_title(cli_chart *c, const char *title, const char *subtitle)
{
    if (!c)
        return;
    free(c->title);
    free(c->subtitle);
    c->title = keep(c, title);
    c->subtitle = keep(c, subtitle);
}

void cli_chart_footer(cli_chart *c, const char *text)
{
    if (!c || !text)
        return;
    char *t = keep(c, text);
    char **f = t ? realloc(c->footer, (c->nfooter + 1) * sizeof *f) : NULL;
    if (!f) {
        free(t);
        c->failed = 1;
        return;
    }
    f[c->nfooter++] = t;
    c->footer = f;
}

void cli_chart_axis(cli_chart *c, int which, cli_scale scale, const char *title,
                    const char *unit, double unit_scale)
{
    if (!c || (which != CLI_CHART_X && which != CLI_CHART_Y))
        return;
    chart_axis *a = &c->axis[which];
    free(a->title);
    free(a->unit);
    a->scale = scale;
    a->title = keep(c, title);
    a->unit = keep(c, unit);
    a->unit_scale = unit_scale > 0 ? unit_scale : 1;
}

int cli_chart_series(cli_chart *c, const char *name, cli_line_style style, int colour)
{
    if (!c)
        return -1;
    chart_series *s = realloc(c->series, (c->nseries + 1) * sizeof *s);
    if (!s) {
        c->failed = 1;
        return -1;
    }
    c->series = s;
    s = &c->series[c->nseries];
    memset(s, 0, sizeof *s);
    s->name = keep(c, name);
    s->style = style == CLI_LINE_DASHED || style == CLI_LINE_PLAIN ? style : CLI_LINE_SOLID;
    s->panel = c->panel;
    s->mark = -1;
    s->colour = colour >= 0 && colour <= CLI_CHART_GREY ? colour : CLI_CHART_GREY;
    return (int)c->nseries++;
}

void cli_chart_point(cli_chart *c, int s, double x, double y)
{
    if (!c || s < 0 || (size_t)s >= c->nseries)
        return;
    chart_series *se = &c->series[s];
    if (se->n == se->cap) {
        size_t want = se->cap ? 2 * se->cap : 8;
        double *xy = realloc(se->xy, want * 2 * sizeof *xy);
        if (xy)
            se->xy = xy;
        double *band = xy ? realloc(se->band, want * 2 * sizeof *band) : NULL;
        if (band)
            se->band = band;
        char **text = band ? realloc(se->text, want * sizeof *text) : NULL;
        if (!text) {
            c->failed = 1;
            return;
        }
        se->text = text;
        se->cap = want;
    }
    se->text[se->n] = NULL;
    se->xy[2 * se->n] = x;
    se->xy[2 * se->n + 1] = y;
    se->band[2 * se->n] = se->band[2 * se->n + 1] = NAN;
    se->n++;
}

void cli_chart_spread(cli_chart *c, int s, double lo, double hi)
{
    if (!c || s < 0 || (size_t)s >= c->nseries || c->series[s].n == 0)
        return;
    chart_series *se = &c->series[s];
    se->band[2 * se->n - 2] = lo < hi ? lo : hi;
    se->band[2 * se->n - 1] = lo < hi ? hi : lo;
}

void cli_chart_point_text(cli_chart *c, int s, const char *text)
{
    if (!c || s < 0 || (size_t)s >= c->nseries || c->series[s].n == 0)
        return;
    chart_series *se = &c->series[s];
    free(se->text[se->n - 1]);
    se->text[se->n - 1] = keep(c, text);
}

void cli_chart_extend(cli_chart *c, int s, int start, int end)
{
    if (!c || s < 0 || (size_t)s >= c->nseries)
        return;
    c->series[s].extend[0] = start != 0;
    c->series[s].extend[1] = end != 0;
}

int cli_chart_panel(cli_chart *c, const char *title)
{
    if (!c)
        return -1;
    /* The first call titles the first panel. */
    int first = c->panel == 0 && c->npanels == 1 && !c->panel_title[0];
    if (!first && c->npanels == CLI_CHART_MAX_PANELS)
        return -1;
    if (!first)
        c->panel = (int)c->npanels++;
    c->panel_title[c->panel] = keep(c, title ? title : "");
    return c->panel;
}

void cli_chart_mark(cli_chart *c, int s, int mark)
{
    if (c && s >= 0 && (size_t)s < c->nseries)
        c->series[s].mark = mark >= 0 && mark < 5 ? mark : -1;
}

void cli_chart_note_at(cli_chart *c, int s, int where)
{
    if (c && s >= 0 && (size_t)s < c->nseries)
        c->series[s].note_at = where & (CLI_NOTE_BELOW | CLI_NOTE_END);
}

void cli_chart_id(cli_chart *c, int s, const char *id)
{
    if (!c || s < 0 || (size_t)s >= c->nseries || !id)
        return;
    char *to = c->series[s].id;
    size_t n = 0;
    for (; *id && n + 1 < sizeof c->series[s].id; id++)
        if (isalnum((unsigned char)*id) || *id == '-')
            to[n++] = *id;
    to[n] = '\0';
}

void cli_chart_note(cli_chart *c, int s, const char *text)
{
    if (!c || s < 0 || (size_t)s >= c->nseries)
        return;
    free(c->series[s].note);
    c->series[s].note = keep(c, text);
}

void cli_chart_level(cli_chart *c, double y, int colour, const char *note)
{
    int s = cli_chart_series(c, NULL, CLI_LINE_DASHED, colour);
    if (s < 0)
        return;
    c->series[s].level = 1;
    cli_chart_point(c, s, 0, y);
    cli_chart_note(c, s, note);
}

void cli_chart_label(cli_chart *c, double x, double y, const char *text, int colour)
{
    if (!c)
        return;
    chart_label *l = realloc(c->labels, (c->nlabels + 1) * sizeof *l);
    if (!l) {
        c->failed = 1;
        return;
    }
    c->labels = l;
    l[c->nlabels].x = x;
    l[c->nlabels].y = y;
    l[c->nlabels].colour = colour >= 0 && colour <= CLI_CHART_GREY ? colour : CLI_CHART_GREY;
    l[c->nlabels].text = keep(c, text);
    l[c->nlabels].panel = c->panel;
    c->nlabels++;
}
