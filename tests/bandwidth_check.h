/*
 * bandwidth_check.h - what the bandwidth tests (test_bandwidth.c on this
 * CPU, simcuda/scenario_bandwidth.c on the simulated GPUs) both do: make
 * options, read a result's figures, each call asserted to succeed.
 * Include after <cmocka.h> and gpuprobe.h.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_TESTS_BANDWIDTH_CHECK_H
#define GPUPROBE_TESTS_BANDWIDTH_CHECK_H

/* Options with a buffer size (0: the rule's), timed passes and tests (a
 * mask of GPUPROBE_BANDWIDTH_TEST_* bits; 0: all the device has). */
static inline gpuprobe_bandwidth_options *bw_options(int64_t bytes, int64_t runs, unsigned tests)
{
    gpuprobe_bandwidth_options *o = NULL;
    assert_int_equal(gpuprobe_bandwidth_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, bytes),
                     GPUPROBE_OK);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_RUNS, runs), GPUPROBE_OK);
    assert_int_equal(gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_TESTS, tests), GPUPROBE_OK);
    return o;
}

static inline double fig(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_test t,
                         gpuprobe_bandwidth_figure f)
{
    double v = -1;
    assert_int_equal(gpuprobe_bandwidth_result_test(r, t, f, &v), GPUPROBE_OK);
    return v;
}

static inline int64_t imetric(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_metric m)
{
    int64_t v = -7;
    assert_int_equal(gpuprobe_bandwidth_result_get_int(r, m, &v), GPUPROBE_OK);
    return v;
}

static inline double dmetric(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_metric m)
{
    double v = -7;
    assert_int_equal(gpuprobe_bandwidth_result_get_double(r, m, &v), GPUPROBE_OK);
    return v;
}

static inline const char *smetric(const gpuprobe_bandwidth_result *r, gpuprobe_bandwidth_metric m)
{
    const char *s = NULL;
    assert_int_equal(gpuprobe_bandwidth_result_get_string(r, m, &s), GPUPROBE_OK);
    return s;
}

#endif
