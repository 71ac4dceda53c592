/*
 * example_util.h - small helpers shared by the example programs: argument
 * matching, JSON string output, human-readable sizes. Not part of the
 * library.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_EXAMPLE_UTIL_H
#define GPUPROBE_EXAMPLE_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "gpuprobe.h"

/* Exit statuses of every example: 0 success, 1 runtime failure (the library
 * returned an error), 2 usage error (bad command line). */
enum { EX_OK = 0, EX_FAIL = 1, EX_USAGE = 2 };

/* Print s as a JSON string literal (with quotes), escaping as RFC 8259 asks. */
void ex_json_string(FILE *out, const char *s);

/* Print a double as JSON: finite values with %.17g, NaN/inf as null. */
void ex_json_double(FILE *out, double v);

/* "12.3 GB" style, decimal units (1 GB = 1e9 bytes, as the lesson prints). */
void ex_human_bytes(char *buf, size_t size, uint64_t bytes);

/* "11.4 B" / "350.0 M" parameters. */
void ex_human_count(char *buf, size_t size, uint64_t count);

/* Parse a non-negative count written as an integer or in e-notation
 * ("7e9", "7000000000", "1.5e10"). 0 on success, -1 if malformed or
 * not a whole number or > limit. */
int ex_parse_count(const char *text, uint64_t limit, uint64_t *out);

/* Print "<prog>: <what>: <status string>: <detail>" on stderr. */
void ex_report(const char *prog, const char *what, gpuprobe_context *ctx,
               gpuprobe_status st);

/* ---- device helpers (smi, cuda_info) ---- */

/* "13.0" from a CUDA version number (1000 * major + 10 * minor). */
void ex_cuda_version(char *buf, size_t size, int version);

/* Stable lower-case token of a SIMD level ("avx2_fma"), and a display name
 * ("AVX2+FMA"). */
const char *ex_simd_name(int64_t simd);
const char *ex_simd_label(int64_t simd);

/* Print the JSON members (no braces) describing device @p index:
 * "index", "spec", "kind" ("cpu" or "cuda"), "name", "total_memory_bytes",
 * then for a CUDA device "cuda_index", "uuid", "pci_bus_id",
 * "compute_capability" ("9.0"), "cc_major", "cc_minor", "multiprocessors",
 * "clock_khz", "memory_clock_khz", "memory_bus_bits"; for the CPU
 * "logical_cores", "simd", "clock_khz" and, with @p verbose, "blas_core",
 * "blas_threads" and "blas_config" (asking for them loads OpenBLAS, which
 * a quick CUDA check does not need). An attribute the system does not know is
 * null. Returns the status of the first failing call other than
 * GPUPROBE_ERR_UNSUPPORTED (GPUPROBE_OK if none). */
gpuprobe_status ex_json_device_members(FILE *out, gpuprobe_context *ctx,
                                       size_t index, int verbose);

/* The JSON members (no braces, no leading comma) "cuda_available" (bool),
 * "reason" (cause token), "detail", "cuda_runtime_version" and
 * "cuda_driver_version" ("13.0" strings, or null when not loaded). */
struct ex_cuda_probe;
void ex_json_cuda_members(FILE *out, const struct ex_cuda_probe *pr);

/* What smi and cuda_info start from: a context, the CUDA answer and the
 * versions. */
typedef struct ex_cuda_probe {
    gpuprobe_context *ctx;
    gpuprobe_cuda_cause cause;
    const char *detail;
    int have_rt, rt;   /* runtime version, when a runtime was loaded */
    int have_drv, drv; /* driver's CUDA version, when a driver was loaded */
} ex_cuda_probe;

/* Parse the command line of a program whose only option is --json (and
 * --help, which prints usage(stdout)), then create a context and ask for
 * CUDA. Returns -1 to go on (probe filled; destroy probe->ctx when done),
 * or the exit status to return at once (usage printed, or a failure
 * reported on stderr). */
int ex_cuda_probe_start(int argc, char **argv, const char *prog,
                        void (*usage)(FILE *), int *json, ex_cuda_probe *probe);

#endif
