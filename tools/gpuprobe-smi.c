/*
 * gpuprobe-smi - every compute device here, as nvidia-smi lists GPUs, and
 * the CPU; why CUDA is not usable when it is not. See gpuprobe-smi(1) and
 * docs/json.md.
 *
 * GPU rows follow nvidia-smi's summary: index, name, total and free memory,
 * compute capability, SM count, PCI bus id; a header line gives the CUDA
 * version the driver supports and the loaded CUDA runtime. Reading a GPU's
 * free memory needs a CUDA context on it; if none exists it is created (as
 * any CUDA program would) and its cost is shown when NVML can measure it.
 * The CPU: model, logical cores, SIMD level, OpenBLAS core and threads, and
 * RAM (cgroup-aware).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option options[] = {
    {"json", NULL, "print one JSON object instead of text"},
    {NULL, NULL, NULL},
};

static const cli_command command = {
    "gpuprobe-smi",
    "List every compute device (GPUs as nvidia-smi does, and the CPU) with its\n"
    "memory; say why CUDA is not usable when it is not.",
    options,
    "a device query failed (the reason is on stderr)",
    "See gpuprobe-smi(1).",
};

/* One memory query per device, shared by the text and the JSON. */
typedef struct meminfo {
    gpuprobe_status st;
    gpuprobe_memory_info m;
    char *error; /* the library's message when st is not GPUPROBE_OK */
} meminfo;

static int query_memory(gpuprobe_context *ctx, size_t n, meminfo *mem)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        /* The spec first: the next call on the context ends the message
         * of a failed one. */
        const char *spec = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &spec);
        mem[i].m = (gpuprobe_memory_info)GPUPROBE_MEMORY_INFO_INIT;
        mem[i].st = gpuprobe_device_memory(ctx, i, &mem[i].m, 0);
        if (mem[i].st != GPUPROBE_OK) {
            mem[i].error = strdup(gpuprobe_last_error(ctx));
            cli_report(ctx, mem[i].st, "%s: memory query", spec);
            failed = 1;
        }
    }
    return failed;
}

/* ---- text ---- */

#define RULE "+-----+----------------------------------+-----------+-----------+------+------+------------------+"

static void gpu_row(gpuprobe_context *ctx, size_t i, const meminfo *mem)
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
    int64_t t = 0;
    if (mem->st == GPUPROBE_OK) {
        cli_bytes(total, sizeof total, mem->m.total_bytes);
        cli_bytes(free_s, sizeof free_s, mem->m.available_bytes);
    } else if (gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY, &t) == GPUPROBE_OK) {
        cli_bytes(total, sizeof total, (uint64_t)t);
    }
    snprintf(cc, sizeof cc, "%lld.%lld", (long long)ma, (long long)mi);
    if (sms > 0)
        snprintf(sm, sizeof sm, "%lld", (long long)sms);
    cli_line("| %3lld | %-32s | %9s | %9s | %-4s | %4s | %-16s |", (long long)ordinal, name,
             total, free_s, cc, sm, bus);
}

static void context_notes(size_t n, const meminfo *mem)
{
    int created = 0, measured = 0;
    for (size_t i = 1; i < n; i++) {
        created |= mem[i].st == GPUPROBE_OK && (mem[i].m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT);
        measured |= mem[i].st == GPUPROBE_OK && (mem[i].m.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED);
    }
    if (!created)
        return;
    cli_put("Free memory was read after creating a CUDA context on each GPU");
    if (measured) {
        cli_put("; the context itself takes:");
        for (size_t i = 1; i < n; i++) {
            if (mem[i].st == GPUPROBE_OK && (mem[i].m.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED)) {
                char b[32];
                cli_bytes(b, sizeof b, mem[i].m.context_bytes);
                cli_put(" cuda:%zu %s", i - 1, b);
            }
        }
    }
    cli_line(".");
}

static void print_text(const cli_probe *pr, size_t n, const meminfo *mem)
{
    char dv[32] = "none", rv[32] = "none";
    if (pr->have_drv)
        cli_cuda_version(dv, sizeof dv, pr->drv);
    if (pr->have_rt)
        cli_cuda_version(rv, sizeof rv, pr->rt);
    cli_line("libgpuprobe %s    Driver CUDA Version: %s    CUDA Runtime Version: %s",
             gpuprobe_version_string(), dv, rv);

    if (pr->cause == GPUPROBE_CUDA_AVAILABLE && n > 1) {
        cli_line(RULE);
        cli_line("| GPU | %-32s | %9s | %9s | %-4s | %4s | %-16s |", "Name", "Mem total",
                 "Mem free", "CC", "SMs", "Bus-Id");
        cli_line(RULE);
        for (size_t i = 1; i < n; i++)
            gpu_row(pr->ctx, i, &mem[i]);
        cli_line(RULE);
        context_notes(n, mem);
    } else {
        cli_line("No usable CUDA GPU: %s [%s]", gpuprobe_cuda_cause_string(pr->cause),
                 gpuprobe_cuda_cause_name(pr->cause));
        cli_line("  %s", pr->detail);
    }

    /* The CPU. */
    const char *name = "?", *core = "?";
    int64_t cores = 0, simd = -1, threads = 0, khz = 0;
    gpuprobe_device_get_string(pr->ctx, 0, GPUPROBE_ATTR_NAME, &name);
    gpuprobe_device_get_string(pr->ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core);
    gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_LOGICAL_CORES, &cores);
    gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_SIMD, &simd);
    gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &threads);
    int have_clock = gpuprobe_device_get_int(pr->ctx, 0, GPUPROBE_ATTR_CLOCK_KHZ, &khz) == GPUPROBE_OK;
    cli_endl();
    cli_line("CPU   %s", name);
    cli_put("      %lld logical cores, %s", (long long)cores, cli_simd_label(simd));
    if (have_clock)
        cli_put(", %.0f MHz", (double)khz / 1000.0);
    cli_endl();
    cli_line("BLAS  OpenBLAS %s, %lld thread%s", core, (long long)threads, threads == 1 ? "" : "s");
    if (mem[0].st != GPUPROBE_OK) {
        cli_line("RAM   ? (the query failed)");
        return;
    }
    char t[32], a[32], p[32];
    cli_bytes(t, sizeof t, mem[0].m.total_bytes);
    cli_bytes(a, sizeof a, mem[0].m.available_bytes);
    cli_bytes(p, sizeof p, mem[0].m.physical_bytes);
    cli_put("RAM   %s total, %s available", t, a);
    if (mem[0].m.flags & GPUPROBE_MEMORY_CGROUP_LIMITED)
        cli_put(" (cgroup limit; the machine has %s)", p);
    cli_endl();
}

/* ---- JSON ---- */

static struct json_object *memory_json(const gpuprobe_memory_info *m)
{
    struct json_object *o = cli_obj();
    cli_set_u64(o, "total_bytes", m->total_bytes);
    cli_set_u64(o, "available_bytes", m->available_bytes);
    cli_set_u64(o, "physical_bytes", m->physical_bytes);
    if (m->cgroup_limit_bytes == UINT64_MAX)
        cli_set_null(o, "cgroup_limit_bytes");
    else
        cli_set_u64(o, "cgroup_limit_bytes", m->cgroup_limit_bytes);
    cli_set_u64(o, "context_bytes", m->context_bytes);
    cli_set_bool(o, "cgroup_limited", m->flags & GPUPROBE_MEMORY_CGROUP_LIMITED);
    cli_set_bool(o, "created_context", m->flags & GPUPROBE_MEMORY_CREATED_CONTEXT);
    cli_set_bool(o, "context_measured", m->flags & GPUPROBE_MEMORY_CONTEXT_MEASURED);
    return o;
}

static int print_json(const cli_probe *pr, size_t n, const meminfo *mem, int *failed)
{
    struct json_object *doc = cli_doc();
    cli_set_str(doc, "library_version", gpuprobe_version_string());
    cli_probe_json(doc, pr);
    struct json_object *devices = cli_arr();
    for (size_t i = 0; i < n; i++) {
        gpuprobe_status st;
        struct json_object *d = cli_device_json(pr->ctx, i, 1, &st);
        if (st != GPUPROBE_OK) {
            cli_report(pr->ctx, st, "device %zu: reading its attributes", i);
            *failed = 1;
        }
        if (mem[i].st == GPUPROBE_OK) {
            cli_set(d, "memory", memory_json(&mem[i].m));
            cli_set_null(d, "error");
        } else {
            cli_set_null(d, "memory");
            cli_set(d, "error", cli_error_obj(gpuprobe_status_name(mem[i].st),
                                              mem[i].error ? mem[i].error : "out of memory"));
        }
        cli_push(devices, d);
    }
    cli_set(doc, "devices", devices);
    return cli_print_doc(doc);
}

int main(int argc, char **argv)
{
    cli_start(&command, argc, argv);
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    int opt;
    while ((opt = cli_next(&a, &v)) >= 0)
        ; /* --json is the only option */
    if (opt == CLI_ARGS_EXIT)
        return cli_finish(a.status);

    cli_probe pr;
    int rc = cli_probe_start(&pr);
    if (rc != CLI_EXIT_OK)
        return cli_finish(rc);
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(pr.ctx, &n);
    meminfo *mem = st == GPUPROBE_OK ? calloc(n, sizeof *mem) : NULL;
    if (!mem) {
        rc = cli_fail(pr.ctx, st == GPUPROBE_OK ? GPUPROBE_ERR_OUT_OF_MEMORY : st,
                      "counting devices");
        gpuprobe_context_destroy(pr.ctx);
        return cli_finish(rc);
    }
    int failed = query_memory(pr.ctx, n, mem);
    if (cli_json())
        rc = print_json(&pr, n, mem, &failed);
    else
        print_text(&pr, n, mem);
    for (size_t i = 0; i < n; i++)
        free(mem[i].error);
    free(mem);
    gpuprobe_context_destroy(pr.ctx);
    return cli_finish(rc != CLI_EXIT_OK ? rc : failed ? CLI_EXIT_FAIL : CLI_EXIT_OK);
}
