/*
 * plot.h - a chart drawn into a picture: PNG and PDF through cairo, SVG
 * written directly (text stays text), the format chosen by the file's
 * extension, and the file replaced atomically (cli_replace_file()), so
 * that a failure leaves no part of a picture behind. Above chart.h and
 * file.h. A build with cairo draws every format (plot_cairo.c); one
 * without it (plot_none.c) draws SVG only, its text widths estimated, and
 * says so for the others.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_PLOT_H
#define GPUPROBE_CLI_PLOT_H

#include <stddef.h>

#include "chart.h"

typedef enum cli_plot_format {
    CLI_PLOT_PNG = 0, /* 1920 x 1200 pixels: CLI_CHART_WIDTH x HEIGHT at 2x */
    CLI_PLOT_SVG = 1,
    CLI_PLOT_PDF = 2,
} cli_plot_format;

/* 1 when this build was built with cairo (it draws every format), else 0. */
int cli_plot_available(void);

/* 1 when this build draws format (a cli_plot_format; -1 is none): every
 * one with cairo, SVG without it. */
int cli_plot_draws(int format);

/* The format a file name asks for by its extension (".png", ".svg",
 * ".pdf", in any letter case), or -1. */
int cli_plot_format_of(const char *path);

/* For a command's check(): CLI_EXIT_OK, or the usage error (exit status
 * 2) for a file that option opt asks for in a format this build does not
 * draw: PNG or PDF without cairo. An extension that names no format is the
 * caller's to refuse. */
int cli_plot_refuse(const char *opt, const char *path);

/* c drawn in format f into memory (malloc'd, *len bytes). Returns 0, or
 * -1 with why (why_size bytes): nothing to draw, a value an axis cannot
 * show, out of memory, a cairo error, a build without cairo. */
int cli_plot_render(const cli_chart *c, cli_plot_format f, char **data, size_t *len, char *why,
                    size_t why_size);

/* c drawn into the file at path, in the format of its extension, replacing
 * it atomically (mode 0644). Returns 0, or -1 with why: the above, an
 * extension that names no format, or what cli_replace_file() says. */
int cli_plot_write(const cli_chart *c, const char *path, char *why, size_t why_size);

#endif
