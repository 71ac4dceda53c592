/*
 * plot_none.c - drawing in a build without cairo: there is none, and every
 * attempt says so (the commands refuse --plot before they start).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "plot.h"

#include <stdio.h>

int cli_plot_available(void)
{
    return 0;
}

int cli_plot_render(const cli_chart *c, cli_plot_format f, char **data, size_t *len, char *why,
                    size_t why_size)
{
    (void)c;
    (void)f;
    *data = NULL;
    *len = 0;
    snprintf(why, why_size, "this build draws no pictures (it was built without cairo)");
    return -1;
}
