/*
 * smi.c - the lesson's `nvidia-smi` step: a table of every device this
 * process can use, the CPU included.
 *
 * GPU rows follow nvidia-smi's summary: index, name, total and free memory,
 * compute capability, SM count, PCI bus id; a header line gives the CUDA
 * version the driver supports and the loaded CUDA runtime. With no usable
 * GPU it says so, with the named cause and its detail. The CPU row gives
 * the model, logical cores, SIMD level, OpenBLAS core and threads, and RAM
 * (cgroup-aware: a container's memory limit is honoured).
 *
 * Reading a GPU's free memory needs a CUDA context on it; if none exists,
 * it is created (as any CUDA program would) and its cost is shown when NVML
 * can measure it.
 *
 * Usage: smi [--json] [--help]
 *
 * With --json it prints exactly one JSON object:
 *
 *   library_version       string, gpuprobe_version_string().
 *   cuda_available        bool.
 *   reason                string: gpuprobe_cuda_cause_name() token.
 *   detail                string: one-line explanation of the cause.
 *   cuda_runtime_version  string "13.0" or null.
 *   cuda_driver_version   string "12.4" or null.
 *   devices               array, the CPU first. Each entry has every member
 *                         cuda_info --json gives (index, spec, kind, name,
 *                         total_memory_bytes, and the kind's attributes;
 *                         the CPU also blas_config), plus "memory":
 *                         { total_bytes, available_bytes, physical_bytes,
 *                           cgroup_limit_bytes (null when no limit),
 *                           context_bytes, cgroup_limited (bool),
 *                           created_context (bool), context_measured (bool) }
 *                         or null with "memory_error" (string) when the
 *                         query failed.
 *
 * Exit status: 0 success (with or without a GPU), 1 a library call failed,
 * 2 bad command line.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "example_util.h"

#include <stdio.h>
#include <string.h>

static const char *prog = "smi";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s [--json] [--help]\n"
            "List every device (GPUs as nvidia-smi does, and the CPU) with its\n"
            "memory; say why CUDA is not usable when it is not.\n",
            prog);
}

/* ---- text ---- */

static const char *rule =
    "+-----+----------------------------------+-----------+-----------+------+------+------------------+\n";

static void gpu_row(gpuprobe_context *ctx, size_t i, int *notes)
{
    const char *name = "?", *bus = "?";
    int64_t ordinal = -1, ma = -1, mi = -1, sms = 0;
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &name);
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_PCI_BUS_ID, &bus);
    gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CUDA_INDEX, &ordinal);
    gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MAJOR, &ma);
    gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_CC_MINOR, &mi);
    if (gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_MULTIPROCESSORS, &sms) != GPUPROBE_OK)
        sms = 0;
    char total[32] = "?", free_s[32] = "?", cc[48], sm[24] = "?";
    gpuprobe_memory_info mem = GPUPROBE_MEMORY_INFO_INIT;
    if (gpuprobe_device_memory(ctx, i, &mem, 0) == GPUPROBE_OK) {
        ex_human_bytes(total, sizeof total, mem.total_bytes);
        ex_human_bytes(free_s, sizeof free_s, mem.available_bytes);
        if (mem.flags & GPUPROBE_MEMORY_CREATED_CONTEXT)
            *notes |= 1;
        if (mem.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED)
            *notes |= 2;
    } else {
        int64_t t = 0;
        if (gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY, &t) == GPUPROBE_OK)
            ex_human_bytes(total, sizeof total, (uint64_t)t);
    }
    snprintf(cc, sizeof cc, "%lld.%lld", (long long)ma, (long long)mi);
    if (sms > 0)
        snprintf(sm, sizeof sm, "%lld", (long long)sms);
    printf("| %3lld | %-32.32s | %9s | %9s | %-4s | %4s | %-16.16s |\n",
           (long long)ordinal, name, total, free_s, cc, sm, bus);
}

static void context_notes(gpuprobe_context *ctx, size_t n, int notes)
{
    if (!(notes & 1))
        return;
    printf("Free memory was read after creating a CUDA context on each GPU");
    if (notes & 2) {
        printf("; the context itself takes:");
        for (size_t i = 1; i < n; i++) {
            gpuprobe_memory_info mem = GPUPROBE_MEMORY_INFO_INIT;
            if (gpuprobe_device_memory(ctx, i, &mem, 0) == GPUPROBE_OK &&
                (mem.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED)) {
                char b[32];
                ex_human_bytes(b, sizeof b, mem.context_bytes);
                printf(" cuda:%zu %s", i - 1, b);
            }
        }
    }
    printf(".\n");
}

static int print_text(const ex_cuda_probe *pr)
{
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(pr->ctx, &n);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "counting devices", pr->ctx, st);
        return EX_FAIL;
    }
    char dv[32] = "none", rv[32] = "none";
    if (pr->have_drv)
        ex_cuda_version(dv, sizeof dv, pr->drv);
    if (pr->have_rt)
        ex_cuda_version(rv, sizeof rv, pr->rt);
    printf("libgpuprobe %s    Driver CUDA Version: %s    CUDA Runtime Version: %s\n",
           gpuprobe_version_string(), dv, rv);

    if (pr->cause == GPUPROBE_CUDA_AVAILABLE && n > 1) {
        int notes = 0;
        fputs(rule, stdout);
        printf("| GPU | %-32s | %9s | %9s | %-4s | %4s | %-16s |\n", "Name", "Mem total",
               "Mem free", "CC", "SMs", "Bus-Id");
        fputs(rule, stdout);
        for (size_t i = 1; i < n; i++)
            gpu_row(pr->ctx, i, &notes);
        fputs(rule, stdout);
        context_notes(pr->ctx, n, notes);
    } else {
        printf("No usable CUDA GPU: %s [%s]\n", gpuprobe_cuda_cause_string(pr->cause),
               gpuprobe_cuda_cause_name(pr->cause));
        printf("  %s\n", pr->detail);
    }

    /* The CPU row. */
    const char *name = "?", *core = "?";
    int64_t cores = 0, simd = -1, threads = 0, khz = 0;
    gpuprobe_device_get_string(pr->ctx, 0, GPUPROBE_ATTR_NAME, &name);
    gpuprobe_device_get_string(pr->ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core);
    gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_LOGICAL_CORES, &cores);
    gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_SIMD, &simd);
    gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &threads);
    int have_clock =
        gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_CLOCK_KHZ, &khz) == GPUPROBE_OK;
    printf("\nCPU   %s\n", name);
    printf("      %lld logical cores, %s", (long long)cores, ex_simd_label(simd));
    if (have_clock)
        printf(", %.0f MHz", (double)khz / 1000.0);
    printf("\nBLAS  OpenBLAS %s, %lld thread%s\n", core, (long long)threads,
           threads == 1 ? "" : "s");
    gpuprobe_memory_info mem = GPUPROBE_MEMORY_INFO_INIT;
    st = gpuprobe_device_memory(pr->ctx, 0, &mem, 0);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "reading host memory", pr->ctx, st);
        return EX_FAIL;
    }
    char t[32], a[32], p[32];
    ex_human_bytes(t, sizeof t, mem.total_bytes);
    ex_human_bytes(a, sizeof a, mem.available_bytes);
    ex_human_bytes(p, sizeof p, mem.physical_bytes);
    printf("RAM   %s total, %s available", t, a);
    if (mem.flags & GPUPROBE_MEMORY_CGROUP_LIMITED)
        printf(" (cgroup limit; the machine has %s)", p);
    printf("\n");
    return EX_OK;
}

/* ---- JSON ---- */

static void json_memory(gpuprobe_context *ctx, size_t i)
{
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_status st = gpuprobe_device_memory(ctx, i, &m, 0);
    if (st != GPUPROBE_OK) {
        fputs(", \"memory\": null, \"memory_error\": ", stdout);
        char msg[640];
        snprintf(msg, sizeof msg, "%s: %s", gpuprobe_status_string(st),
                 gpuprobe_last_error(ctx));
        ex_json_string(stdout, msg);
        return;
    }
    printf(", \"memory\": {\"total_bytes\": %llu, \"available_bytes\": %llu, "
           "\"physical_bytes\": %llu, \"cgroup_limit_bytes\": ",
           (unsigned long long)m.total_bytes, (unsigned long long)m.available_bytes,
           (unsigned long long)m.physical_bytes);
    if (m.cgroup_limit_bytes == UINT64_MAX)
        fputs("null", stdout);
    else
        printf("%llu", (unsigned long long)m.cgroup_limit_bytes);
    printf(", \"context_bytes\": %llu, \"cgroup_limited\": %s, \"created_context\": %s, "
           "\"context_measured\": %s}",
           (unsigned long long)m.context_bytes,
           (m.flags & GPUPROBE_MEMORY_CGROUP_LIMITED) ? "true" : "false",
           (m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT) ? "true" : "false",
           (m.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED) ? "true" : "false");
}

static int print_json(const ex_cuda_probe *pr)
{
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(pr->ctx, &n);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "counting devices", pr->ctx, st);
        return EX_FAIL;
    }
    fputs("{\"library_version\": ", stdout);
    ex_json_string(stdout, gpuprobe_version_string());
    fputs(", ", stdout);
    ex_json_cuda_members(stdout, pr);
    fputs(", \"devices\": [", stdout);
    int rc = EX_OK;
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {" : "{", stdout);
        st = ex_json_device_members(stdout, pr->ctx, i, 1);
        if (st != GPUPROBE_OK) {
            fputs("}", stdout);
            ex_report(prog, "reading device attributes", pr->ctx, st);
            rc = EX_FAIL;
            break;
        }
        json_memory(pr->ctx, i);
        fputs("}", stdout);
    }
    fputs("]}\n", stdout);
    return rc;
}

int main(int argc, char **argv)
{
    int json;
    ex_cuda_probe pr;
    int exit_now = ex_cuda_probe_start(argc, argv, prog, usage, &json, &pr);
    if (exit_now >= 0)
        return exit_now;
    int rc = json ? print_json(&pr) : print_text(&pr);
    gpuprobe_context_destroy(pr.ctx);
    return rc;
}
