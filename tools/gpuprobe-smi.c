/*
 * gpuprobe-smi - every compute device here, as nvidia-smi lists GPUs, and
 * the CPU; why CUDA is not usable when it is not. See gpuprobe-smi(1) and
 * docs/json.md.
 *
 * GPU rows follow nvidia-smi's summary, with both numberings (the CUDA
 * ordinal and nvidia-smi's NVML index): name, total, used and free memory,
 * compute capability, SM count, PCI bus id; then each GPU's health and
 * placement (utilisation, temperature, power and its limit, compute
 * processes, PCIe link, NUMA node and local CPUs), and the MIG layout. A
 * header line gives the CUDA version the driver supports and the loaded
 * CUDA runtime. Memory is read through NVML, creating no CUDA context; only
 * when NVML cannot answer is a context created (as any CUDA program would),
 * and the output says so. The CPU: model, logical cores, SIMD level,
 * OpenBLAS core and threads, and RAM (cgroup-aware).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option options[] = {
    {"json", NULL, "print one JSON object instead of text"},
    {NULL, NULL, NULL},
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

#define RULE "+-----+------+----------------------------------+-----------+-----------+-----------+------+------+------------------+"
#define RULE2 "+-----+------+------+------+-----------------+-------+--------------+------+------------"

/* An integer attribute, or -1 when it is not known. */
static int64_t int_or(gpuprobe_context *ctx, size_t i, gpuprobe_attr attr)
{
    int64_t v = -1;
    if (gpuprobe_device_get_int(ctx, i, attr, &v) != GPUPROBE_OK)
        v = -1;
    return v;
}

static void gpu_row(gpuprobe_context *ctx, size_t i, const meminfo *mem)
{
    const char *name = "?", *bus = "?";
    int64_t ordinal = int_or(ctx, i, GPUPROBE_ATTR_CUDA_INDEX);
    int64_t nvml = int_or(ctx, i, GPUPROBE_ATTR_NVML_INDEX);
    int64_t ma = int_or(ctx, i, GPUPROBE_ATTR_CC_MAJOR), mi = int_or(ctx, i, GPUPROBE_ATTR_CC_MINOR);
    int64_t sms = int_or(ctx, i, GPUPROBE_ATTR_MULTIPROCESSORS);
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_NAME, &name);
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_PCI_BUS_ID, &bus);
    char total[32] = "?", used[32] = "?", free_s[32] = "?", cc[48], sm[24] = "?", nv[24] = "-";
    int64_t t = int_or(ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY);
    if (mem->st == GPUPROBE_OK) {
        cli_bytes(total, sizeof total, mem->m.total_bytes);
        cli_bytes(used, sizeof used, mem->m.used_bytes);
        cli_bytes(free_s, sizeof free_s, mem->m.available_bytes);
    } else if (t > 0) {
        cli_bytes(total, sizeof total, (uint64_t)t);
    }
    snprintf(cc, sizeof cc, "%lld.%lld", (long long)ma, (long long)mi);
    if (sms > 0)
        snprintf(sm, sizeof sm, "%lld", (long long)sms);
    if (nvml >= 0)
        snprintf(nv, sizeof nv, "%lld", (long long)nvml);
    cli_line("| %3lld | %4s | %-32s | %9s | %9s | %9s | %-4s | %4s | %-16s |", (long long)ordinal,
             nv, name, total, used, free_s, cc, sm, bus);
}

/* "35%", "41C", "-" when unknown. */
static void fmt_or_dash(char *buf, size_t size, int64_t v, const char *unit)
{
    if (v < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%lld%s", (long long)v, unit);
}

static void health_row(gpuprobe_context *ctx, size_t i)
{
    char util[24], mutil[24], temp[24], power[64], procs[24], pcie[96], numa[24];
    int64_t mw = int_or(ctx, i, GPUPROBE_ATTR_POWER_MW);
    int64_t limit = int_or(ctx, i, GPUPROBE_ATTR_POWER_LIMIT_MW);
    int64_t gen = int_or(ctx, i, GPUPROBE_ATTR_PCIE_GEN), width = int_or(ctx, i, GPUPROBE_ATTR_PCIE_WIDTH);
    int64_t mgen = int_or(ctx, i, GPUPROBE_ATTR_PCIE_MAX_GEN);
    int64_t mwidth = int_or(ctx, i, GPUPROBE_ATTR_PCIE_MAX_WIDTH);
    fmt_or_dash(util, sizeof util, int_or(ctx, i, GPUPROBE_ATTR_GPU_UTILIZATION), "%");
    fmt_or_dash(mutil, sizeof mutil, int_or(ctx, i, GPUPROBE_ATTR_MEMORY_UTILIZATION), "%");
    fmt_or_dash(temp, sizeof temp, int_or(ctx, i, GPUPROBE_ATTR_TEMPERATURE_C), "C");
    fmt_or_dash(procs, sizeof procs, int_or(ctx, i, GPUPROBE_ATTR_COMPUTE_PROCESSES), "");
    fmt_or_dash(numa, sizeof numa, int_or(ctx, i, GPUPROBE_ATTR_NUMA_NODE), "");
    char a[24], b[24];
    fmt_or_dash(a, sizeof a, mw < 0 ? -1 : (mw + 500) / 1000, "W");
    fmt_or_dash(b, sizeof b, limit < 0 ? -1 : (limit + 500) / 1000, "W");
    snprintf(power, sizeof power, "%s / %s", a, b);
    if (gen < 0 && mgen < 0)
        snprintf(pcie, sizeof pcie, "-");
    else
        snprintf(pcie, sizeof pcie, "%lldx%lld/%lldx%lld", (long long)gen, (long long)width,
                 (long long)mgen, (long long)mwidth);
    const char *cpus = "-";
    gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_LOCAL_CPUS, &cpus);
    cli_line("| %3lld | %4s | %4s | %4s | %15s | %5s | %-12s | %4s | %s",
             (long long)int_or(ctx, i, GPUPROBE_ATTR_CUDA_INDEX), util, mutil, temp, power, procs,
             pcie, numa, cpus);
}

/* The GPUs in MIG mode: each parent once, with the instances this process
 * sees. */
static void mig_notes(gpuprobe_context *ctx, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const char *parent = NULL, *uuid = "?", *name = "?";
        if (int_or(ctx, i, GPUPROBE_ATTR_MIG_INSTANCE) != 1)
            continue;
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_MIG_PARENT_UUID, &parent);
        int first = 1; /* the first instance of its GPU in the list */
        for (size_t j = 1; j < i && first; j++) {
            const char *other = NULL;
            first = !(int_or(ctx, j, GPUPROBE_ATTR_MIG_INSTANCE) == 1 && parent &&
                      gpuprobe_device_get_string(ctx, j, GPUPROBE_ATTR_MIG_PARENT_UUID, &other) ==
                          GPUPROBE_OK && strcmp(other, parent) == 0);
        }
        if (!first)
            continue;
        char nv[24] = "?", count[24] = "?";
        fmt_or_dash(nv, sizeof nv, int_or(ctx, i, GPUPROBE_ATTR_NVML_INDEX), "");
        fmt_or_dash(count, sizeof count, int_or(ctx, i, GPUPROBE_ATTR_MIG_COUNT), "");
        cli_line("MIG: GPU %s (%s) is in MIG mode, with %s instance(s); this process sees:", nv,
                 parent ? parent : "its UUID is not known", count);
        for (size_t j = i; j < n; j++) {
            const char *other = NULL;
            if (int_or(ctx, j, GPUPROBE_ATTR_MIG_INSTANCE) != 1 ||
                (parent && (gpuprobe_device_get_string(ctx, j, GPUPROBE_ATTR_MIG_PARENT_UUID, &other) !=
                                GPUPROBE_OK ||
                            strcmp(other, parent) != 0)) ||
                (!parent && j != i))
                continue;
            char mix[24];
            fmt_or_dash(mix, sizeof mix, int_or(ctx, j, GPUPROBE_ATTR_MIG_INDEX), "");
            gpuprobe_device_get_string(ctx, j, GPUPROBE_ATTR_UUID, &uuid);
            gpuprobe_device_get_string(ctx, j, GPUPROBE_ATTR_NAME, &name);
            cli_line("  cuda:%lld = MIG instance %s, %s, %s", (long long)int_or(ctx, j, GPUPROBE_ATTR_CUDA_INDEX),
                     mix, name, uuid);
        }
    }
}

/* Where the memory figures come from. */
static void memory_notes(const cli_probe *pr, size_t n, const meminfo *mem)
{
    int created = 0, measured = 0, nvml = 0, context = 0;
    for (size_t i = 1; i < n; i++) {
        if (mem[i].st != GPUPROBE_OK)
            continue;
        created |= (mem[i].m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT) != 0;
        measured |= (mem[i].m.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED) != 0;
        nvml |= mem[i].m.source == GPUPROBE_MEMORY_SOURCE_NVML;
        context |= mem[i].m.source == GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT;
    }
    if (nvml && !context)
        cli_line("Memory: read through NVML; no CUDA context was created.");
    if (!context)
        return;
    cli_put("Memory:");
    for (size_t i = 1; i < n; i++)
        if (mem[i].st == GPUPROBE_OK && mem[i].m.source == GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT)
            cli_put(" cuda:%zu", i - 1);
    cli_put(" read inside a CUDA context, as NVML could not answer");
    if (created)
        cli_put(" (the context was created for it)");
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
    (void)pr;
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
        cli_line("| GPU | NVML | %-32s | %9s | %9s | %9s | %-4s | %4s | %-16s |", "Name", "Mem total",
                 "Mem used", "Mem free", "CC", "SMs", "Bus-Id");
        cli_line(RULE);
        for (size_t i = 1; i < n; i++)
            gpu_row(pr->ctx, i, &mem[i]);
        cli_line(RULE);
        memory_notes(pr, n, mem);
        cli_endl();
        cli_line(RULE2);
        cli_line("| GPU | Util | MemU | Temp |   Power / Limit | Procs | PCIe now/max | NUMA | Local CPUs");
        cli_line(RULE2);
        for (size_t i = 1; i < n; i++)
            health_row(pr->ctx, i);
        cli_line(RULE2);
        mig_notes(pr->ctx, n);
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
    cli_set_u64(o, "used_bytes", m->used_bytes);
    cli_set_u64(o, "reserved_bytes", m->reserved_bytes);
    cli_set_str(o, "source", m->source == GPUPROBE_MEMORY_SOURCE_NVML           ? "nvml"
                             : m->source == GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT ? "cuda_context"
                                                                                : "host");
    cli_set_bool(o, "context_held", m->context_held != 0);
    return o;
}

/* A GPU's health now: each member null when the driver cannot say. */
static struct json_object *health_json(gpuprobe_context *ctx, size_t i)
{
    static const struct {
        const char *key;
        gpuprobe_attr attr;
    } members[] = {
        {"gpu_utilization", GPUPROBE_ATTR_GPU_UTILIZATION},
        {"memory_utilization", GPUPROBE_ATTR_MEMORY_UTILIZATION},
        {"temperature_c", GPUPROBE_ATTR_TEMPERATURE_C},
        {"power_mw", GPUPROBE_ATTR_POWER_MW},
        {"power_limit_mw", GPUPROBE_ATTR_POWER_LIMIT_MW},
        {"compute_processes", GPUPROBE_ATTR_COMPUTE_PROCESSES},
        {"pcie_gen", GPUPROBE_ATTR_PCIE_GEN},
        {"pcie_width", GPUPROBE_ATTR_PCIE_WIDTH},
    };
    struct json_object *o = cli_obj();
    for (size_t k = 0; k < sizeof members / sizeof members[0]; k++) {
        int64_t v = int_or(ctx, i, members[k].attr);
        if (v < 0)
            cli_set_null(o, members[k].key);
        else
            cli_set_i64(o, members[k].key, v);
    }
    return o;
}

static int print_json(const cli_probe *pr, size_t n, const meminfo *mem, int *failed)
{
    struct json_object *doc = cli_doc();
    cli_probe_json(doc, pr);
    struct json_object *devices = cli_arr();
    for (size_t i = 0; i < n; i++) {
        gpuprobe_status st;
        struct json_object *d = cli_device_json(pr->ctx, i, 1, &st);
        if (st != GPUPROBE_OK) {
            cli_report(pr->ctx, st, "device %zu: reading its attributes", i);
            *failed = 1;
        }
        int64_t kind = -1;
        if (gpuprobe_device_get_int(pr->ctx, i, GPUPROBE_ATTR_KIND, &kind) == GPUPROBE_OK &&
            kind == GPUPROBE_DEVICE_CUDA)
            cli_set(d, "health", health_json(pr->ctx, i));
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

static int option(int opt, const char *value)
{
    (void)opt; /* --json is the only option, and cli_next() takes it */
    (void)value;
    return CLI_EXIT_OK;
}

static int run(gpuprobe_context *ctx)
{
    cli_probe pr;
    int rc = cli_probe_cuda(ctx, &pr);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(ctx, &n);
    meminfo *mem = st == GPUPROBE_OK ? calloc(n, sizeof *mem) : NULL;
    if (!mem)
        return cli_fail(ctx, st == GPUPROBE_OK ? GPUPROBE_ERR_OUT_OF_MEMORY : st, "counting devices");
    int failed = query_memory(ctx, n, mem);
    if (cli_json())
        rc = print_json(&pr, n, mem, &failed);
    else
        print_text(&pr, n, mem);
    for (size_t i = 0; i < n; i++)
        free(mem[i].error);
    free(mem);
    return rc != CLI_EXIT_OK ? rc : failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static const cli_command command = {
    "gpuprobe-smi",
    "List every compute device (GPUs as nvidia-smi does, and the CPU) with its\n"
    "memory, health, placement and MIG layout, creating no CUDA context; say\n"
    "why CUDA is not usable when it is not.",
    options,
    "a device query failed (the reason is on stderr)",
    "See gpuprobe-smi(1).",
    option,
    NULL,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
