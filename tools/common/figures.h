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

/* Bytes and counts in decimal units, CUDA versions, dtype lists and SIMD
 * words are the library's own formatter's (lib/format.h, compiled in):
 * gp_format_bytes(), gp_format_count(), gp_format_cuda_version(),
 * gp_format_dtypes(), gp_simd_name(), gp_simd_label(). */
#include "format.h"

/* "143771MiB": whole MiB (2^20 bytes, rounded down), as nvidia-smi writes
 * memory. */
void cli_mib(char *buf, size_t size, uint64_t bytes);
/* A duration with three significant digits in the unit that suits it:
 * "1.81 s", "27.7 ms", "511 \xc2\xb5s" (UTF-8 micro sign), "5.50 \xc2\xb5s",
 * "843 ns"; "0 s" for 0 or less. */
void cli_seconds(char *buf, size_t size, double seconds);
/* "median of 5 runs" or, when each run timed a batch of calls, "median of
 * 100 runs of 40 calls" (GPUPROBE_METRIC_RUNS, GPUPROBE_METRIC_BATCH). */
void cli_runs(char *buf, size_t size, const gpuprobe_matmul_result *r);

#endif
