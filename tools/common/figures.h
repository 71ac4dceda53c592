/*
 * figures.h - numbers written for people: bytes, counts, durations, CUDA
 * versions, the runs behind a median. Pure formatting, beside text.h at the
 * bottom of tools/common.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_FIGURES_H
#define GPUPROBE_CLI_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprobe.h"

/* "12.3 GB" (decimal units, as the lesson prints), "11.4 B" parameters,
 * "13.0" from a CUDA version number (1000 * major + 10 * minor). */
void cli_bytes(char *buf, size_t size, uint64_t bytes);
void cli_count(char *buf, size_t size, uint64_t count);
void cli_cuda_version(char *buf, size_t size, int version);
/* A duration with three significant digits in the unit that suits it:
 * "1.81 s", "27.7 ms", "511 \xc2\xb5s" (UTF-8 micro sign), "5.50 \xc2\xb5s",
 * "843 ns"; "0 s" for 0 or less. */
void cli_seconds(char *buf, size_t size, double seconds);
/* "median of 5 runs" or, when each run timed a batch of calls, "median of
 * 100 runs of 40 calls" (GPUPROBE_METRIC_RUNS, GPUPROBE_METRIC_BATCH). */
void cli_runs(char *buf, size_t size, const gpuprobe_matmul_result *r);

#endif
