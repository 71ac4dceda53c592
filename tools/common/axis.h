/*
 * axis.h - the arithmetic of a chart's axes: the range an axis shows, where
 * its labelled ticks go on a linear or logarithmic scale, what they say
 * ("1 TFLOP/s", "8192"), and where a value lands along it. Pure functions
 * (the C library's and libm's only), at the bottom of tools/common beside
 * figures.h; chart.c lays a chart out with them.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_AXIS_H
#define GPUPROBE_CLI_AXIS_H

#include <stddef.h>

typedef enum cli_scale {
    CLI_SCALE_LINEAR = 0, /* ticks 1, 2 or 5 x 10^k apart */
    CLI_SCALE_LOG10 = 1,  /* ticks at 1, 10, 100 ... (and 2, 5 over a short range) */
    CLI_SCALE_LOG2 = 2,   /* ticks at powers of two: 64, 128, 256 ... */
} cli_scale;

/* The most labelled ticks an axis gets. */
#define CLI_AXIS_MAX_TICKS 16

typedef struct cli_axis {
    cli_scale scale;
    double lo, hi;  /* the range shown, in data units: lo < hi, both > 0 on a log scale */
    size_t nticks;  /* labelled ticks, ascending, within [lo, hi] */
    double tick[CLI_AXIS_MAX_TICKS];
} cli_axis;

/* An axis that shows every value from min to max (min <= max), widened to
 * round numbers: on a log scale to whole decades (LOG10) or powers of two
 * (LOG2), on a linear one to a multiple of the tick step. A single value
 * (min == max) gets a range around it: a decade or an octave on either
 * side when it is one itself, else the one it lies in. At most
 * max_ticks labelled ticks (2 to CLI_AXIS_MAX_TICKS; a log scale then
 * labels every second or third decade or power). Returns 0, or -1 when no
 * such axis exists (a value that is not finite, min > max, a value <= 0 on
 * a log scale, a range beyond 10^+-300); *a is then unchanged. */
int cli_axis_fit(cli_axis *a, cli_scale scale, double min, double max, size_t max_ticks);

/* Where v lies along the axis: 0 at lo, 1 at hi, proportionally (to the
 * logarithms on a log scale); values outside the range land outside [0, 1].
 * A value a log scale cannot place (<= 0) lands at -1e9. */
double cli_axis_pos(const cli_axis *a, double v);

/* The faint lines between the labelled ticks of a log10 axis: 2 ... 9 x
 * 10^k inside the range, without the labelled ones. Writes at most max
 * values to out and returns how many there are (none on the other scales,
 * or when the axis spans more than 6 decades, where they would crowd). */
size_t cli_axis_minor(const cli_axis *a, double *out, size_t max);

/* A tick's label: v in units of unit (NULL: a plain number). With a unit,
 * v * unit_scale is written with an SI prefix and three significant digits
 * at most ("1 TFLOP/s" for v = 1000 GFLOP/s with unit_scale 1e9; "250
 * GFLOP/s", "1.5 TFLOP/s", "0 FLOP/s"); a plain number is written whole
 * when it is a whole number below 10^7 ("8192"), else with three
 * significant digits ("0.25", "1.5e+09"). Always NUL-terminated (size >
 * 0). */
void cli_axis_label(char *buf, size_t size, double v, const char *unit, double unit_scale);

#endif
