/*
 * fields.c - the --query-gpu fields of gpuprobe-smi: nvidia-smi's names
 * for what libgpuprobe's GPU snapshot holds, with nvidia-smi's headers,
 * units and formats.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "fields.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text.h"

typedef enum kind {
    K_INT,     /* a number as it is */
    K_TEXT,    /* a string field */
    K_MIB,     /* bytes as whole MiB */
    K_TOTAL,   /* memory.total: NVML's total, the driver's reserve included */
    K_PERCENT, /* "35 %" */
    K_WATTS,   /* milliwatts as "287.50 W" */
    K_CC,      /* "9.0" */
    K_MIG,     /* "Enabled", "Disabled" */
    K_BUS,     /* "00000000:19:00.0", as nvidia-smi writes it */
    K_COUNT,   /* the GPUs of the snapshot */
    K_TIME     /* the refresh's time */
} kind;

struct smi_field {
    const char *name, *alias; /* alias: another name nvidia-smi takes, or NULL */
    const char *unit;         /* in the header, "[MiB]", and after the value */
    kind kind;
    gpuprobe_gpu_field field;
    const char *help;
};

static const smi_field fields[] = {
    {"timestamp", NULL, NULL, K_TIME, GPUPROBE_GPU_INDEX,
     "when the GPUs were read, \"YYYY/MM/DD HH:MM:SS.mmm\" (local time)"},
    {"driver_version", NULL, NULL, K_TEXT, GPUPROBE_GPU_DRIVER_VERSION,
     "the NVIDIA driver's version, \"580.65.06\""},
    {"count", NULL, NULL, K_COUNT, GPUPROBE_GPU_INDEX, "the GPUs NVML knows"},
    {"index", NULL, NULL, K_INT, GPUPROBE_GPU_INDEX,
     "NVML's index, as nvidia-smi numbers GPUs (by PCI bus id); not CUDA's ordinal"},
    {"name", "gpu_name", NULL, K_TEXT, GPUPROBE_GPU_NAME, "the product name"},
    {"uuid", "gpu_uuid", NULL, K_TEXT, GPUPROBE_GPU_UUID, "\"GPU-...\""},
    {"pci.bus_id", "gpu_bus_id", NULL, K_BUS, GPUPROBE_GPU_PCI_BUS_ID,
     "\"domain:bus:device.function\", the domain with eight digits"},
    {"memory.total", NULL, "MiB", K_TOTAL, GPUPROBE_GPU_TOTAL_BYTES,
     "device memory, the driver's reserve included (as nvidia-smi has it)"},
    {"memory.reserved", NULL, "MiB", K_MIB, GPUPROBE_GPU_RESERVED_BYTES,
     "memory the driver reserves for itself"},
    {"memory.used", NULL, "MiB", K_MIB, GPUPROBE_GPU_USED_BYTES, "memory used, every process's"},
    {"memory.free", NULL, "MiB", K_MIB, GPUPROBE_GPU_FREE_BYTES, "memory free"},
    {"utilization.gpu", NULL, "%", K_PERCENT, GPUPROBE_GPU_GPU_UTILIZATION,
     "percent of the last sample period in which a kernel ran"},
    {"utilization.memory", NULL, "%", K_PERCENT, GPUPROBE_GPU_MEMORY_UTILIZATION,
     "percent of it in which device memory was read or written"},
    {"temperature.gpu", NULL, NULL, K_INT, GPUPROBE_GPU_TEMPERATURE_C, "degrees Celsius"},
    {"power.draw", NULL, "W", K_WATTS, GPUPROBE_GPU_POWER_MW, "power drawn now"},
    {"power.limit", NULL, "W", K_WATTS, GPUPROBE_GPU_POWER_LIMIT_MW, "the enforced power limit"},
    {"enforced.power.limit", NULL, "W", K_WATTS, GPUPROBE_GPU_POWER_LIMIT_MW,
     "the same as power.limit"},
    {"pcie.link.gen.current", NULL, NULL, K_INT, GPUPROBE_GPU_PCIE_GEN,
     "the PCIe generation now (lower at idle)"},
    {"pcie.link.gen.max", NULL, NULL, K_INT, GPUPROBE_GPU_PCIE_MAX_GEN,
     "the highest PCIe generation of the GPU and the system together"},
    {"pcie.link.width.current", NULL, NULL, K_INT, GPUPROBE_GPU_PCIE_WIDTH,
     "the PCIe lanes now"},
    {"pcie.link.width.max", NULL, NULL, K_INT, GPUPROBE_GPU_PCIE_MAX_WIDTH,
     "the widest PCIe link of the GPU and the system together"},
    {"compute_cap", NULL, NULL, K_CC, GPUPROBE_GPU_CC_MAJOR, "CUDA compute capability, \"9.0\""},
    {"mig.mode.current", NULL, NULL, K_MIG, GPUPROBE_GPU_MIG_MODE,
     "\"Enabled\" or \"Disabled\"; [N/A] on a GPU without MIG"},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static const smi_field *find(const char *name, size_t len)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const char *names[2] = {fields[i].name, fields[i].alias};
        for (int k = 0; k < 2; k++)
            if (names[k] && strlen(names[k]) == len && strncasecmp(names[k], name, len) == 0)
                return &fields[i];
    }
    return NULL;
}

int smi_fields_parse(const char *text, const smi_field **out, size_t max, size_t *n,
                     char *bad, size_t bad_size)
{
    *n = 0;
    for (const char *p = text;; p++) {
        size_t len = strcspn(p, ",");
        const char *name = p;
        while (len && (*name == ' ' || *name == '\t')) {
            name++;
            len--;
        }
        while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
            len--;
        const smi_field *f = find(name, len);
        if (!f || *n == max) {
            snprintf(bad, bad_size, "%.*s", (int)(len < 64 ? len : 64), name);
            return -1;
        }
        out[(*n)++] = f;
        p = name + len + strspn(name + len, " \t");
        if (*p != ',')
            return 0;
    }
}

const char *smi_field_header(const smi_field *f, char *buf, size_t size)
{
    if (f->unit)
        snprintf(buf, size, "%s [%s]", f->name, f->unit);
    else
        snprintf(buf, size, "%s", f->name);
    return buf;
}

/* "00000000:19:00.0" from the library's "0000:19:00.0". */
static void nvidia_bus_id(const char *bus, char *buf, size_t size)
{
    unsigned dom, b, dev, fn;
    char tail;
    if (sscanf(bus, "%x:%x:%x.%x%c", &dom, &b, &dev, &fn, &tail) == 4)
        snprintf(buf, size, "%08X:%02X:%02X.%X", dom, b, dev, fn);
    else
        snprintf(buf, size, "%s", bus);
}

/* An integer field's value with its unit; 0 when unknown. */
static int number(const smi_field *f, const gpuprobe_gpus *g, size_t gpu, int units,
                  char *buf, size_t size)
{
    int64_t v = 0, r = 0, minor = 0;
    if (gpuprobe_gpus_get_int(g, gpu, f->field, &v) != GPUPROBE_OK)
        return 0;
    const char *sep = units && f->unit ? " " : "", *unit = units && f->unit ? f->unit : "";
    switch (f->kind) {
    case K_TOTAL:
        if (gpuprobe_gpus_get_int(g, gpu, GPUPROBE_GPU_RESERVED_BYTES, &r) != GPUPROBE_OK)
            r = 0;
        v += r;
        /* fall through */
    case K_MIB:
        snprintf(buf, size, "%lld%s%s", (long long)(v >> 20), sep, unit);
        return 1;
    case K_WATTS:
        snprintf(buf, size, "%.2f%s%s", (double)v / 1000.0, sep, unit);
        return 1;
    case K_CC:
        if (gpuprobe_gpus_get_int(g, gpu, GPUPROBE_GPU_CC_MINOR, &minor) != GPUPROBE_OK)
            return 0;
        snprintf(buf, size, "%lld.%lld", (long long)v, (long long)minor);
        return 1;
    case K_MIG:
        snprintf(buf, size, "%s", v ? "Enabled" : "Disabled");
        return 1;
    default:
        snprintf(buf, size, "%lld%s%s", (long long)v, sep, unit);
        return 1;
    }
}

/* "2025/01/31 12:00:00.123" */
static int timestamp(const struct timespec *now, char *buf, size_t size)
{
    struct tm tm;
    char day[32];
    if (!localtime_r(&now->tv_sec, &tm) || !strftime(day, sizeof day, "%Y/%m/%d %H:%M:%S", &tm))
        return 0;
    snprintf(buf, size, "%s.%03ld", day, now->tv_nsec / 1000000);
    return 1;
}

void smi_field_value(const smi_field *f, const gpuprobe_gpus *g, size_t gpu,
                     const struct timespec *now, int units, char *buf, size_t size)
{
    const char *s = NULL;
    int known = 1;
    if (f->kind == K_TIME)
        known = timestamp(now, buf, size);
    else if (f->kind == K_COUNT)
        snprintf(buf, size, "%zu", gpuprobe_gpus_count(g));
    else if (f->kind == K_TEXT || f->kind == K_BUS)
        known = gpuprobe_gpus_get_string(g, gpu, f->field, &s) == GPUPROBE_OK;
    else if (f->kind != K_TIME)
        known = number(f, g, gpu, units, buf, size);
    if (known && s && f->kind == K_BUS)
        nvidia_bus_id(s, buf, size);
    else if (known && s)
        snprintf(buf, size, "%s", s);
    else if (!known)
        snprintf(buf, size, "[N/A]");
}

void smi_fields_help(void)
{
    cli_line("The fields of --query-gpu=FIELD[,FIELD...], with --format=csv[,noheader][,nounits]");
    cli_line("(nvidia-smi's names; memory in MiB, power in W; [N/A]: the driver cannot say):");
    for (size_t i = 0; i < NFIELDS; i++) {
        char head[64];
        cli_endl();
        if (fields[i].alias)
            cli_line("\"%s\" or \"%s\"", fields[i].name, fields[i].alias);
        else
            cli_line("\"%s\"", fields[i].name);
        cli_line("    %s", fields[i].help);
        if (fields[i].unit)
            cli_line("    header \"%s\"", smi_field_header(&fields[i], head, sizeof head));
    }
}
