/*
 * probe.c - the CUDA answer and the device descriptions the commands
 * share.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "probe.h"

#include "figures.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_probe_cuda(gpuprobe_context *ctx, cli_probe *pr)
{
    memset(pr, 0, sizeof *pr);
    pr->ctx = ctx;
    pr->detail = "";
    gpuprobe_status st = gpuprobe_cuda_status(ctx, &pr->cause, &pr->detail);
    if (st != GPUPROBE_OK)
        return cli_fail(ctx, st, "asking for CUDA");
    pr->have_rt = gpuprobe_cuda_runtime_version(ctx, &pr->rt) == GPUPROBE_OK;
    pr->have_drv = gpuprobe_cuda_driver_version(ctx, &pr->drv) == GPUPROBE_OK;
    return CLI_EXIT_OK;
}

static void set_version(struct json_object *o, const char *key, int have, int version)
{
    char v[32];
    gp_format_cuda_version(v, sizeof v, version);
    cli_set_str(o, key, have ? v : NULL);
}

void cli_cuda_json(struct json_object *o, gpuprobe_cuda_cause cause, const char *detail)
{
    cli_set_bool(o, "cuda_available", cause == GPUPROBE_CUDA_AVAILABLE);
    cli_set_str(o, "reason", gpuprobe_cuda_cause_name(cause));
    const char *text = gpuprobe_cuda_cause_string(cause);
    size_t n = strlen(text) + (detail ? strlen(detail) : 0) + 3;
    char *both = malloc(n);
    if (both)
        snprintf(both, n, "%s%s%s", text, detail && detail[0] ? ": " : "", detail ? detail : "");
    cli_set_str(o, "reason_text", both ? both : text);
    free(both);
}

void cli_probe_json(struct json_object *o, const cli_probe *pr)
{
    cli_cuda_json(o, pr->cause, pr->detail);
    set_version(o, "cuda_runtime_version", pr->have_rt, pr->rt);
    set_version(o, "cuda_driver_version", pr->have_drv, pr->drv);
}



/* Keep the first failure that is not "the system does not know". */
static void keep(gpuprobe_status *first, gpuprobe_status st)
{
    if (st != GPUPROBE_OK && st != GPUPROBE_ERR_UNSUPPORTED && *first == GPUPROBE_OK)
        *first = st;
}

static void int_member(struct json_object *o, gpuprobe_context *ctx, size_t index,
                       const char *key, gpuprobe_attr attr, gpuprobe_status *first)
{
    int64_t v = 0;
    gpuprobe_status st = gpuprobe_device_get_int(ctx, index, attr, &v);
    if (st == GPUPROBE_OK)
        cli_set_i64(o, key, v);
    else
        cli_set_null(o, key);
    keep(first, st);
}

static void str_member(struct json_object *o, gpuprobe_context *ctx, size_t index,
                       const char *key, gpuprobe_attr attr, gpuprobe_status *first)
{
    const char *s = NULL;
    gpuprobe_status st = gpuprobe_device_get_string(ctx, index, attr, &s);
    cli_set_str(o, key, st == GPUPROBE_OK ? s : NULL);
    keep(first, st);
}

struct json_object *cli_device_json(gpuprobe_context *ctx, size_t index,
                                    int verbose, gpuprobe_status *st)
{
    gpuprobe_status first = GPUPROBE_OK;
    int64_t kind = -1;
    struct json_object *o = cli_obj();
    cli_set_u64(o, "index", index);
    keep(&first, gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_KIND, &kind));
    str_member(o, ctx, index, "spec", GPUPROBE_ATTR_SPEC, &first);
    cli_set_str(o, "kind", kind == GPUPROBE_DEVICE_CUDA ? "cuda" : "cpu");
    str_member(o, ctx, index, "name", GPUPROBE_ATTR_NAME, &first);
    int_member(o, ctx, index, "total_memory_bytes", GPUPROBE_ATTR_TOTAL_MEMORY, &first);
    if (kind == GPUPROBE_DEVICE_CUDA) {
        int64_t ma = -1, mi = -1;
        int_member(o, ctx, index, "cuda_index", GPUPROBE_ATTR_CUDA_INDEX, &first);
        str_member(o, ctx, index, "uuid", GPUPROBE_ATTR_UUID, &first);
        str_member(o, ctx, index, "pci_bus_id", GPUPROBE_ATTR_PCI_BUS_ID, &first);
        if (gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_CC_MAJOR, &ma) == GPUPROBE_OK &&
            gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_CC_MINOR, &mi) == GPUPROBE_OK) {
            char cc[48];
            snprintf(cc, sizeof cc, "%lld.%lld", (long long)ma, (long long)mi);
            cli_set_str(o, "compute_capability", cc);
        } else {
            cli_set_null(o, "compute_capability");
        }
        int_member(o, ctx, index, "cc_major", GPUPROBE_ATTR_CC_MAJOR, &first);
        int_member(o, ctx, index, "cc_minor", GPUPROBE_ATTR_CC_MINOR, &first);
        int_member(o, ctx, index, "multiprocessors", GPUPROBE_ATTR_MULTIPROCESSORS, &first);
        int_member(o, ctx, index, "clock_khz", GPUPROBE_ATTR_CLOCK_KHZ, &first);
        int_member(o, ctx, index, "memory_clock_khz", GPUPROBE_ATTR_MEMORY_CLOCK_KHZ, &first);
        int_member(o, ctx, index, "memory_bus_bits", GPUPROBE_ATTR_MEMORY_BUS_BITS, &first);
        /* Placement and MIG (NVML, sysfs): null where the driver cannot say. */
        int_member(o, ctx, index, "nvml_index", GPUPROBE_ATTR_NVML_INDEX, &first);
        int64_t v = -1;
        gpuprobe_status s = gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_MIG_MODE, &v);
        cli_set_str(o, "mig_mode", s != GPUPROBE_OK ? NULL : v ? "enabled" : "disabled");
        keep(&first, s);
        s = gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_MIG_INSTANCE, &v);
        if (s == GPUPROBE_OK)
            cli_set_bool(o, "mig_instance", v == 1);
        else
            cli_set_null(o, "mig_instance");
        keep(&first, s);
        int_member(o, ctx, index, "mig_index", GPUPROBE_ATTR_MIG_INDEX, &first);
        str_member(o, ctx, index, "mig_parent_uuid", GPUPROBE_ATTR_MIG_PARENT_UUID, &first);
        int_member(o, ctx, index, "mig_count", GPUPROBE_ATTR_MIG_COUNT, &first);
        int_member(o, ctx, index, "numa_node", GPUPROBE_ATTR_NUMA_NODE, &first);
        str_member(o, ctx, index, "local_cpus", GPUPROBE_ATTR_LOCAL_CPUS, &first);
        int_member(o, ctx, index, "pcie_max_gen", GPUPROBE_ATTR_PCIE_MAX_GEN, &first);
        int_member(o, ctx, index, "pcie_max_width", GPUPROBE_ATTR_PCIE_MAX_WIDTH, &first);
    } else {
        int64_t simd = -1;
        int_member(o, ctx, index, "logical_cores", GPUPROBE_ATTR_LOGICAL_CORES, &first);
        gpuprobe_status s = gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_SIMD, &simd);
        cli_set_str(o, "simd", s == GPUPROBE_OK ? gp_simd_name(simd) : NULL);
        keep(&first, s);
        int_member(o, ctx, index, "clock_khz", GPUPROBE_ATTR_CLOCK_KHZ, &first);
        if (verbose) { /* the BLAS attributes load OpenBLAS (~3 ms) */
            str_member(o, ctx, index, "blas_core", GPUPROBE_ATTR_BLAS_CORE, &first);
            int_member(o, ctx, index, "blas_threads", GPUPROBE_ATTR_BLAS_THREADS, &first);
            str_member(o, ctx, index, "blas_config", GPUPROBE_ATTR_BLAS_CONFIG, &first);
        }
    }
    *st = first;
    return o;
}
