/*
 * values.h - the values the commands take on their command lines: counts,
 * compute capabilities, workloads. Pure parsing, at the bottom of
 * tools/common: a malformed value is -1, and the caller reports it.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_VALUES_H
#define GPUPROBE_CLI_VALUES_H

#include <stdint.h>

#include "gpuprobe.h"

/* Values: 0 on success, -1 when malformed (nothing written). */
/* A count written as an integer or in e-notation ("7e9", "1.5e10"): whole,
 * non-negative, at most limit. */
int cli_parse_count(const char *text, uint64_t limit, uint64_t *out);
/* A size in bytes: a number as cli_parse_count() takes it, with a unit or
 * none: B, kB, MB, GB, TB, PB (powers of 1000) or KiB, MiB, GiB, TiB, PiB
 * (powers of 1024), in any letter case ("20GB", "20GiB", "1.5gib",
 * "2e10"). The bytes must come out whole and at most limit. */
int cli_parse_size(const char *text, uint64_t limit, uint64_t *out);
/* A range "FROM..TO" of two counts as cli_parse_count() takes them, FROM
 * <= TO ("64..8192", "1e3..1e4"). */
int cli_parse_range(const char *text, uint64_t limit, uint64_t *from, uint64_t *to);
/* A compute capability "X" or "X.Y". */
int cli_parse_cc(const char *text, int *major, int *minor);
/* "weights", "inference", "training". */
int cli_parse_workload(const char *text, gpuprobe_workload *out);
/* 1 when the library has a capacity rule for this pair (no training rule
 * for fp8, int8, int4). */
int cli_have_rule(gpuprobe_dtype dtype, gpuprobe_workload workload);

#endif
