/*
 * axis.c - a chart axis's range, ticks and labels: linear scales with
 * ticks 1, 2 or 5 x 10^k apart, logarithmic ones with ticks at decades or
 * powers of two, labels with SI prefixes. Pure arithmetic.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "axis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Exponents of a log axis past which doubles lose their way. */
#define MAX_EXP10 300
#define MAX_EXP2 990

/* 10^e, exact for the decades a chart shows (pow() is exact there on
 * glibc, and the tests hold it to that). */
static double pow10i(int e)
{
    return pow(10.0, (double)e);
}

/* The smallest of 1, 2, 5 x 10^k that is >= x (x > 0). */
static double nice_step(double x)
{
    int e = (int)floor(log10(x));
    double base = pow10i(e);
    static const double m[] = {1, 2, 5, 10};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i] * base >= x * (1 - 1e-12))
            return m[i] * base;
    return 10 * base;
}

/* The exponents of the whole powers of base around [min, max]: *e0 at or
 * below min, *e1 at or above max, and one more on either side when both
 * are the same power. A value within 1e-9 (relative, in the exponent) of a
 * power counts as that power, so that 1000 is a decade of its own despite
 * rounding in the logarithm. */
static int log_range(double min, double max, int two, int *e0, int *e1)
{
    double l0 = two ? log2(min) : log10(min), l1 = two ? log2(max) : log10(max);
    double f0 = floor(l0 + 1e-9), f1 = ceil(l1 - 1e-9);
    double limit = two ? MAX_EXP2 : MAX_EXP10;
    if (f0 == f1) {
        f0 -= 1;
        f1 += 1;
    }
    if (f0 < -limit || f1 > limit)
        return -1;
    *e0 = (int)f0;
    *e1 = (int)f1;
    return 0;
}

static void fit_log(cli_axis *a, int two, int e0, int e1, size_t max_ticks)
{
    double base = two ? 2.0 : 10.0;
    a->lo = pow(base, e0);
    a->hi = pow(base, e1);
    a->nticks = 0;
    int count = e1 - e0 + 1;
    if (!two && count <= 3) {
        /* Two decades or less: 1, 2 and 5 of each, for enough labels. */
        static const double m[] = {1, 2, 5};
        for (int e = e0; e <= e1; e++)
            for (size_t i = 0; i < 3 && !(e == e1 && i > 0); i++)
                if (a->nticks < max_ticks)
                    a->tick[a->nticks++] = m[i] * pow10i(e);
        return;
    }
    int step = (count + (int)max_ticks - 1) / (int)max_ticks;
    for (int e = e0; e <= e1; e += step)
        a->tick[a->nticks++] = pow(base, e);
}

static void fit_linear(cli_axis *a, double min, double max, size_t max_ticks)
{
    double span = max - min;
    if (span == 0)
        span = min != 0 ? fabs(min) : 1.0;
    size_t want = max_ticks < 6 ? max_ticks : 6;
    double step = nice_step(span / (double)(want - 1));
    double lo, hi;
    for (;;) {
        lo = floor(min / step) * step;
        hi = ceil(max / step) * step;
        if (lo == hi) {
            lo -= step;
            hi += step;
        }
        if ((hi - lo) / step + 1 <= (double)max_ticks + 1e-9)
            break;
        step = nice_step(step * 1.000001);
    }
    a->lo = lo;
    a->hi = hi;
    a->nticks = 0;
    size_t n = (size_t)llround((hi - lo) / step) + 1;
    for (size_t i = 0; i < n && a->nticks < CLI_AXIS_MAX_TICKS; i++) {
        double t = lo + (double)i * step;
        if (fabs(t) < step * 1e-9)
            t = 0; /* not 1.4e-17 */
        a->tick[a->nticks++] = t;
    }
}

int cli_axis_fit(cli_axis *a, cli_scale scale, double min, double max, size_t max_ticks)
{
    if (!a || !isfinite(min) || !isfinite(max) || min > max || max_ticks < 2)
        return -1;
    if (max_ticks > CLI_AXIS_MAX_TICKS)
        max_ticks = CLI_AXIS_MAX_TICKS;
    cli_axis fit = {scale, 0, 0, 0, {0}};
    if (scale == CLI_SCALE_LOG10 || scale == CLI_SCALE_LOG2) {
        int e0, e1, two = scale == CLI_SCALE_LOG2;
        if (!(min > 0) || log_range(min, max, two, &e0, &e1) != 0)
            return -1;
        fit_log(&fit, two, e0, e1, max_ticks);
    } else if (scale == CLI_SCALE_LINEAR) {
        if (fabs(min) > 1e300 || fabs(max) > 1e300)
            return -1;
        fit_linear(&fit, min, max, max_ticks);
    } else {
        return -1;
    }
    *a = fit;
    return 0;
}

double cli_axis_pos(const cli_axis *a, double v)
{
    if (a->scale == CLI_SCALE_LINEAR)
        return (v - a->lo) / (a->hi - a->lo);
    if (!(v > 0))
        return -1e9;
    return log(v / a->lo) / log(a->hi / a->lo);
}

size_t cli_axis_minor(const cli_axis *a, double *out, size_t max)
{
    if (a->scale != CLI_SCALE_LOG10 || a->hi / a->lo > 1.000001e6)
        return 0;
    size_t n = 0;
    int e0 = (int)lround(log10(a->lo)), e1 = (int)lround(log10(a->hi));
    for (int e = e0; e < e1; e++) {
        for (int m = 2; m <= 9; m++) {
            double v = m * pow10i(e);
            int labelled = 0;
            for (size_t i = 0; i < a->nticks; i++)
                labelled |= fabs(a->tick[i] - v) <= v * 1e-9;
            if (labelled)
                continue;
            if (n < max)
                out[n] = v;
            n++;
        }
    }
    return n;
}

/* The mantissa of x (!= 0) in units of 1000^*e3, with three significant
 * digits at most, into buf; *e3 moves up when rounding reaches 1000. */
static void si_mantissa(char *buf, size_t size, double x, int *e3)
{
    *e3 = (int)floor(log10(fabs(x)) / 3.0 + 1e-12);
    if (*e3 < -5)
        *e3 = -5;
    if (*e3 > 6)
        *e3 = 6;
    for (;;) {
        snprintf(buf, size, "%.3g", x / pow10i(3 * *e3));
        if (*e3 < 6 && fabs(strtod(buf, NULL)) >= 1000) {
            (*e3)++;
            continue;
        }
        return;
    }
}

void cli_axis_label(char *buf, size_t size, double v, const char *unit, double unit_scale)
{
    if (!buf || size == 0)
        return;
    if (!unit) {
        if (v == floor(v) && fabs(v) < 1e7)
            snprintf(buf, size, "%.0f", v);
        else
            snprintf(buf, size, "%.3g", v);
        return;
    }
    double x = v * unit_scale;
    if (x == 0 || !isfinite(x)) {
        snprintf(buf, size, "%s %s", x == 0 ? "0" : "?", unit);
        return;
    }
    static const char *const prefix[] = {"f", "p", "n", "\xc2\xb5", "m", "", "k", "M", "G", "T", "P", "E"};
    char m[32];
    int e3 = 0;
    si_mantissa(m, sizeof m, x, &e3);
    snprintf(buf, size, "%s %s%s", m, prefix[e3 + 5], unit);
}
