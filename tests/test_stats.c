/*
 * test_stats.c - the statistics helpers of the timed matmul: extremes,
 * mean, spread, median and quantiles.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "internal.h"

static void test_odd_count(void **state)
{
    (void)state;
    double v[] = {5.0, 1.0, 3.0, 9.0, 2.0};
    assert_true(gp_stats_min(v, 5) == 1.0);
    assert_true(gp_stats_max(v, 5) == 9.0);
    assert_true(gp_stats_mean(v, 5) == 4.0);
    assert_true(gp_stats_median_inplace(v, 5) == 3.0);
    /* sorted in place */
    for (int i = 1; i < 5; i++)
        assert_true(v[i - 1] <= v[i]);
}

/* The extreme may be at any place, the first and the last included, and
 * is one of the n values given. */
static void test_extremes_anywhere(void **state)
{
    (void)state;
    for (int at = 0; at < 6; at++) {
        double v[6] = {4, 5, 6, 7, 8, 9};
        v[at] = -1;
        assert_true(gp_stats_min(v, 6) == -1);
        v[at] = 100;
        assert_true(gp_stats_max(v, 6) == 100);
    }
    /* Only the n values given count, not what follows them. */
    double w[4] = {2, 3, 1, 1000};
    assert_true(gp_stats_max(w, 3) == 3);
    w[3] = -1000;
    assert_true(gp_stats_min(w, 3) == 1);
}

static void test_even_count(void **state)
{
    (void)state;
    double v[] = {4.0, 1.0, 3.0, 2.0};
    assert_true(gp_stats_median_inplace(v, 4) == 2.5);
    double w[] = {7.0, 7.0};
    assert_true(gp_stats_median_inplace(w, 2) == 7.0);
}

static void test_one_sample(void **state)
{
    (void)state;
    double v[] = {0.25};
    assert_true(gp_stats_min(v, 1) == 0.25);
    assert_true(gp_stats_max(v, 1) == 0.25);
    assert_true(gp_stats_mean(v, 1) == 0.25);
    assert_true(gp_stats_stddev(v, 1) == 0.0);
    assert_true(gp_stats_median_inplace(v, 1) == 0.25);
}

static void test_empty(void **state)
{
    (void)state;
    double v[1] = {0};
    assert_true(isnan(gp_stats_min(v, 0)));
    assert_true(isnan(gp_stats_max(v, 0)));
    assert_true(isnan(gp_stats_mean(v, 0)));
    assert_true(isnan(gp_stats_median_inplace(v, 0)));
    assert_true(gp_stats_stddev(v, 0) == 0.0);
}

static void test_stddev_known(void **state)
{
    (void)state;
    /* Mean 5; squared deviations sum to 32; sample variance 32/7. */
    double v[] = {2, 4, 4, 4, 5, 5, 7, 9};
    assert_true(fabs(gp_stats_stddev(v, 8) - sqrt(32.0 / 7.0)) < 1e-15);
    /* Large offset: the two-pass formula does not cancel. */
    double w[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    assert_true(fabs(gp_stats_stddev(w, 3) - 1.0) < 1e-9);
    double c[] = {3, 3, 3};
    assert_true(gp_stats_stddev(c, 3) == 0.0);
    /* Two samples: the smallest count with a spread. */
    double two[] = {1, 3};
    assert_true(fabs(gp_stats_stddev(two, 2) - sqrt(2.0)) < 1e-15);
}

/* Quantiles of sorted values, linear between the order statistics around
 * q (n - 1) (numpy.percentile's default, R's type 7): of 1, 2, 4, 8, 16,
 * the 10th percentile lies 0.4 of the way from 1 to 2, the 90th 0.6 of
 * the way from 8 to 16. */
static void test_quantiles(void **state)
{
    (void)state;
    double v[] = {16, 1, 8, 2, 4};
    gp_stats_sort(v, 5);
    for (int i = 1; i < 5; i++)
        assert_true(v[i - 1] <= v[i]);
    static const double q[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
    static const double want[] = {1, 1.4, 2, 4, 8, 12.8, 16};
    for (int i = 0; i < 7; i++)
        if (fabs(gp_stats_quantile_sorted(v, 5, q[i]) - want[i]) > 1e-12)
            fail_msg("q = %g: %.17g, want %g", q[i], gp_stats_quantile_sorted(v, 5, q[i]),
                     want[i]);
    /* One value: every quantile is it; none: NaN. */
    double one[] = {0.5};
    assert_true(gp_stats_quantile_sorted(one, 1, 0.0) == 0.5);
    assert_true(gp_stats_quantile_sorted(one, 1, 0.75) == 0.5);
    assert_true(gp_stats_quantile_sorted(one, 1, 1.0) == 0.5);
    assert_true(isnan(gp_stats_quantile_sorted(one, 0, 0.5)));
    /* The interquartile range of 1..8: 6.25 - 2.75. */
    double e[] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_true(gp_stats_quantile_sorted(e, 8, 0.75) - gp_stats_quantile_sorted(e, 8, 0.25) == 3.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_count),
        cmocka_unit_test(test_extremes_anywhere),
        cmocka_unit_test(test_even_count),
        cmocka_unit_test(test_one_sample),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_stddev_known),
        cmocka_unit_test(test_quantiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
