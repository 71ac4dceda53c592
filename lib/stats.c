/*
 * stats.c - summary statistics of the timed runs.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

double gp_stats_min(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double gp_stats_max(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

double gp_stats_mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

double gp_stats_stddev(const double *v, size_t n)
{
    if (n < 2)
        return 0.0;
    /* Two passes: the mean first, then squared deviations from it (no
     * catastrophic cancellation as with sum(x^2) - n*mean^2). */
    double mean = gp_stats_mean(v, n);
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - mean;
        s += d * d;
    }
    return sqrt(s / (double)(n - 1));
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void gp_stats_sort(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
}

double gp_stats_quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    /* Between the two order statistics around q (n - 1), linearly: the
     * median is the middle value, or the mean of the two middle ones. */
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1)
        return v[n - 1];
    double frac = pos - (double)lo;
    return v[lo] + frac * (v[lo + 1] - v[lo]);
}

double gp_stats_median_inplace(double *v, size_t n)
{
    gp_stats_sort(v, n);
    return gp_stats_quantile_sorted(v, n, 0.5);
}
