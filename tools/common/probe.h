/*
 * probe.h - what the commands say about CUDA and the devices, above the
 * JSON and report layers: the CUDA answer and versions, and one device as
 * a JSON object.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_PROBE_H
#define GPUPROBE_CLI_PROBE_H

#include "gpuprobe.h"
#include "json.h"

typedef struct cli_probe {
    gpuprobe_context *ctx;
    gpuprobe_cuda_cause cause;
    const char *detail; /* valid until the next call on ctx that fails */
    int have_rt, rt;    /* runtime version, when a runtime was loaded */
    int have_drv, drv;  /* the driver's CUDA version, when a driver was loaded */
} cli_probe;

/* Ask ctx for CUDA: the cause, its detail and the versions. Returns
 * CLI_EXIT_OK to go on, or the exit status after reporting the failure
 * ("asking for CUDA"). */
int cli_probe_cuda(gpuprobe_context *ctx, cli_probe *pr);

/* Into o: "cuda_available" (bool), "reason" (the cause's token) and
 * "reason_text" ("<the cause's text>: <detail>", for people). */
void cli_cuda_json(struct json_object *o, gpuprobe_cuda_cause cause, const char *detail);

/* cli_cuda_json(), then "cuda_runtime_version" and "cuda_driver_version"
 * ("13.0" or null). */
void cli_probe_json(struct json_object *o, const cli_probe *pr);

/* Device index as a JSON object: "index", "spec", "kind", "name",
 * "total_memory_bytes", then for a CUDA device "cuda_index", "uuid",
 * "pci_bus_id", "compute_capability", "cc_major", "cc_minor",
 * "multiprocessors", "clock_khz", "memory_clock_khz", "memory_bus_bits",
 * "nvml_index", "mig_mode", "mig_instance", "mig_index", "mig_parent_uuid",
 * "mig_count", "numa_node", "local_cpus", "pcie_max_gen", "pcie_max_width";
 * for the CPU "logical_cores", "simd", "clock_khz" and, with verbose (which
 * loads OpenBLAS), "blas_core", "blas_threads", "blas_config". What the
 * system does not know is null. *st: the first failure other than
 * GPUPROBE_ERR_UNSUPPORTED, or GPUPROBE_OK. */
struct json_object *cli_device_json(gpuprobe_context *ctx, size_t index,
                                    int verbose, gpuprobe_status *st);

/* Token ("avx2_fma") and label ("AVX2+FMA") of a SIMD level. */

#endif
