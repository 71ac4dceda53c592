/*
 * roofline.h - gpuprobe-fit --model ... --roofline FILE: each device's
 * roofline from the figures the speed estimate measured there (its read
 * rate as the slope, its matmul throughput at the model's shapes as the
 * roof), with the model's prefill and decode as labelled operating points
 * (their arithmetic intensity and the throughput the estimate predicts).
 * The drawing is tools/common/roofline.c's, as gpuprobe-bench --roofline
 * draws it.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_FIT_ROOFLINE_H
#define GPUPROBE_FIT_ROOFLINE_H

#include <stddef.h>

#include "cli.h"

/* One device's estimate, as plan.c holds it. */
typedef struct fit_roof_input {
    const char *spec, *name;
    const gpuprobe_speed_figures *fig;
    const gpuprobe_speed *speed;
    int64_t prompt, batch;
} fit_roof_input;

/* Draw the devices (at most CLI_CHART_MAX_PANELS) into path; title names
 * the model. Returns 0, or 1 after saying why nothing was written (on
 * standard error). */
int fit_roofline_write(const char *path, const char *model, const fit_roof_input *in, size_t n);

#endif
