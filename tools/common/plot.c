/*
 * plot.c - what drawing a chart does whatever draws it: the format from a
 * file's extension, and the picture written over the file atomically.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "plot.h"

#include "file.h"
#include "report.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_plot_format_of(const char *path)
{
    static const char *const ext[] = {[CLI_PLOT_PNG] = ".png", [CLI_PLOT_SVG] = ".svg",
                                      [CLI_PLOT_PDF] = ".pdf"};
    if (!path)
        return -1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    /* A name before the extension: ".png" alone is a hidden file's name. */
    for (int f = 0; f < 3 && n > 4; f++)
        if (strcasecmp(base + n - 4, ext[f]) == 0)
            return f;
    return -1;
}

int cli_plot_write(const cli_chart *c, const char *path, char *why, size_t why_size)
{
    int f = cli_plot_format_of(path);
    if (f < 0) {
        snprintf(why, why_size, "the file name ends in neither .png, .svg nor .pdf");
        return -1;
    }
    char *data = NULL;
    size_t len = 0;
    if (cli_plot_render(c, (cli_plot_format)f, &data, &len, why, why_size) != 0)
        return -1;
    int rc = cli_replace_file(path, data, len, 0644, why, why_size);
    free(data);
    return rc;
}

int cli_plot_refuse(const char *opt, const char *path)
{
    int f = cli_plot_format_of(path);
    if (f < 0 || cli_plot_draws(f))
        return CLI_EXIT_OK;
    return cli_usage_error("%s: this %s was built without cairo, so it draws SVG only (a .svg "
                           "file; for PNG and PDF build it with cairo: Debian's libcairo2-dev)",
                           opt, cli_prog());
}
