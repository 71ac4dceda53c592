/*
 * plot_none.c - drawing in a build without cairo: SVG only. svg.c writes
 * the document from the same layout as plot_cairo.c, but the text widths
 * the layout needs are estimated here from the character count (a
 * sans-serif's average advance), not measured in a font: labels may sit a
 * little closer or wider than in a cairo build. PNG and PDF need cairo,
 * and every attempt at them says so (the commands refuse them before they
 * start).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "draw.h"
#include "plot.h"

#include <stdio.h>

int cli_plot_available(void)
{
    return 0;
}

int cli_plot_draws(int format)
{
    return format == CLI_PLOT_SVG;
}

/* About the advance of DejaVu Sans: 0.55 of the size a character (0.6 in
 * bold), a UTF-8 sequence counted once. */
static double estimate(void *ctx, const char *text, double size, int bold)
{
    (void)ctx;
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        chars += (*p & 0xC0) != 0x80;
    return (double)chars * size * (bold ? 0.6 : 0.55);
}

int cli_plot_render(const cli_chart *c, cli_plot_format f, char **data, size_t *len, char *why,
                    size_t why_size)
{
    *data = NULL;
    *len = 0;
    if (f != CLI_PLOT_SVG) {
        snprintf(why, why_size, "this build draws SVG only (it was built without cairo)");
        return -1;
    }
    draw_list l;
    int rc = draw_layout(c, estimate, NULL, &l, why, why_size);
    if (rc == 0 && (rc = draw_svg(&l, c->title, data, len)) != 0)
        snprintf(why, why_size, "out of memory");
    draw_list_free(&l);
    return rc;
}
