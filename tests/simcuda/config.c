/*
 * config.c - the fleet configuration of the simulated NVIDIA stack.
 *
 * The language (docs/testing.md has the reference):
 *
 *   # comment                      ';' also ends a line (for SIMCUDA_FLEET)
 *   key = value                    process-wide keys come first
 *   [gpu]                          a GPU; its keys follow
 *   key = value
 *   [mig]                          a MIG instance of the [gpu] above it
 *   key = value
 *
 * Keys live in one table (name, section, kind, field): a new per-GPU
 * attribute (utilisation, temperature, power, processes, ...) is a field in
 * sim_unit and a line in that table. Unknown keys and bad values are
 * errors, so a mistyped scenario fails instead of testing something else.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { S_GLOBAL = 1, S_GPU = 2, S_MIG = 4 };

typedef enum kind {
    K_STRING, K_BYTES, K_INT, K_MHZ, K_CC, K_DOUBLE, K_UUID, K_PCI, K_PRESET,
    K_DRIVER_VERSION, K_CODE, K_MODE, K_BUG, K_FAIL, K_FAIL_LATE, K_FAULT_ASYNC,
    K_PERCENT, K_WATTS, K_LINK, K_PROCESS, K_ACCESS, K_ID, K_DOT_BUG
} kind;

typedef struct key {
    const char *name;
    int scope;
    kind kind;
    size_t off;   /* into sim_config (S_GLOBAL) or sim_unit */
    size_t size;  /* K_STRING */
} key;

#define G(f) offsetof(sim_config, f)
#define U(f) offsetof(sim_unit, f)

static const key keys[] = {
    {"driver_version", S_GLOBAL, K_DRIVER_VERSION, G(driver_version), 0},
    {"driver_string", S_GLOBAL, K_STRING, G(driver_string), sizeof(((sim_config *)0)->driver_string)},
    {"error_name", S_GLOBAL, K_STRING, G(error_name), sizeof(((sim_config *)0)->error_name)},
    {"error_text", S_GLOBAL, K_STRING, G(error_text), sizeof(((sim_config *)0)->error_text)},
    {"cuinit_error", S_GLOBAL, K_CODE, G(cuinit_error), 0},
    {"nvml_init_error", S_GLOBAL, K_CODE, G(nvml_init_error), 0},
    {"context_bytes", S_GLOBAL, K_BYTES, G(ctx_bytes), 0},
    {"context_ms", S_GLOBAL, K_INT, G(context_ms), 0},
    {"mode", S_GLOBAL, K_MODE, G(deferred), 0},
    {"gemm_bug", S_GLOBAL, K_BUG, G(gemm_bug), 0},
    {"dot_bug", S_GLOBAL, K_DOT_BUG, G(dot_bug), 0},
    {"cublas_version", S_GLOBAL, K_INT, G(blas_version), 0},
    {"gemm_launch_ns", S_GLOBAL, K_INT, G(gemm_launch_ns), 0},
    {"gemm_ramp", S_GLOBAL, K_DOUBLE, G(gemm_ramp), 0},
    {"gemm_ramp_calls", S_GLOBAL, K_INT, G(gemm_ramp_calls), 0},
    {"fail", S_GLOBAL, K_FAIL, 0, 0},
    {"fail_late", S_GLOBAL, K_FAIL_LATE, 0, 0},
    {"fault_async", S_GLOBAL, K_FAULT_ASYNC, 0, 0},
    {"preset", S_GPU, K_PRESET, 0, 0},
    {"name", S_GPU | S_MIG, K_STRING, U(name), SIM_NAME_LEN},
    {"uuid", S_GPU | S_MIG, K_UUID, U(uuid), 0},
    {"pci", S_GPU, K_PCI, 0, 0},
    {"total", S_GPU | S_MIG, K_BYTES, U(total), 0},
    {"free", S_GPU | S_MIG, K_BYTES, U(free0), 0},
    {"reserved", S_GPU, K_BYTES, U(reserved), 0},
    {"alloc_reserve", S_GPU | S_MIG, K_BYTES, U(alloc_reserve), 0},
    {"context_bytes", S_GPU | S_MIG, K_BYTES, U(ctx_bytes), 0},
    {"cc", S_GPU, K_CC, 0, 0},
    {"sms", S_GPU | S_MIG, K_INT, U(sms), 0},
    {"clock_mhz", S_GPU, K_MHZ, U(clock_khz), 0},
    {"memory_clock_mhz", S_GPU, K_MHZ, U(mem_clock_khz), 0},
    {"bus_bits", S_GPU, K_INT, U(bus_bits), 0},
    {"tflops", S_GPU | S_MIG, K_DOUBLE, U(tflops), 0},
    {"copy_gbps", S_GPU | S_MIG, K_DOUBLE, U(copy_gbps), 0},
    {"memory_gbps", S_GPU | S_MIG, K_DOUBLE, U(memory_gbps), 0},
    {"pageable_gbps", S_GPU | S_MIG, K_DOUBLE, U(pageable_gbps), 0},
    {"l2", S_GPU, K_BYTES, U(l2_bytes), 0},
    {"utilization", S_GPU, K_PERCENT, U(util_gpu), 0},
    {"memory_utilization", S_GPU, K_PERCENT, U(util_mem), 0},
    {"temperature", S_GPU, K_INT, U(temp_c), 0},
    {"power", S_GPU, K_WATTS, U(power_mw), 0},
    {"power_limit", S_GPU, K_WATTS, U(power_limit_mw), 0},
    {"pcie", S_GPU, K_LINK, 0, 0},
    {"pcie_max", S_GPU, K_LINK, 0, 0},
    {"pcie_idle", S_GPU, K_LINK, 0, 0},
    {"process", S_GPU | S_MIG, K_PROCESS, 0, 0},
    {"nvml_access", S_GPU, K_ACCESS, 0, 0},
    {"profile", S_MIG, K_STRING, U(profile), sizeof(((sim_unit *)0)->profile)},
    {"gi", S_MIG, K_ID, U(gi), 0},
    {"ci", S_MIG, K_ID, U(ci), 0},
    {"slices", S_MIG, K_ID, U(slices), 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Illustrative figures of common boards (public specifications): name,
 * compute capability, SMs, boost and memory clocks (MHz), bus width,
 * memory as CUDA reports it, fp32 TFLOP/s, host link GB/s (pinned),
 * memory GB/s (the published figure), L2 cache (MiB). */
static const struct preset {
    const char *id, *name;
    int major, minor, sms, clock_mhz, mem_mhz, bus;
    uint64_t total;
    double tflops, gbps, mem_gbps, l2_mib;
    int pcie_gen, tdp_w, mig;
} presets[] = {
    {"H200", "NVIDIA H200", 9, 0, 132, 1980, 3201, 6144, UINT64_C(150754820096), 67.0, 50.0, 4800.0, 50, 5, 700, 1},
    {"H100", "NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120, UINT64_C(85024112640), 67.0, 50.0, 3350.0, 50, 5, 700, 1},
    {"A100-80GB", "NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410, 1593, 5120, UINT64_C(85100068864), 19.5, 25.0, 2039.0, 40, 4, 400, 1},
    {"A100-40GB", "NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410, 1215, 5120, UINT64_C(42505273344), 19.5, 25.0, 1555.0, 40, 4, 400, 1},
    {"L4", "NVIDIA L4", 8, 9, 58, 2040, 6251, 192, UINT64_C(23580639232), 30.3, 25.0, 300.0, 48, 4, 72, 0},
    {"RTX4090", "NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 10501, 384, UINT64_C(25393692672), 82.6, 25.0, 1008.0, 72, 4, 450, 0},
    {"T4", "Tesla T4", 7, 5, 40, 1590, 5001, 256, UINT64_C(15828320256), 8.1, 12.0, 320.0, 4, 3, 70, 0},
    {"K80", "Tesla K80", 3, 7, 13, 823, 2505, 384, UINT64_C(11996954624), 4.1, 12.0, 240.0, 1.5, 3, 150, 0},
};

/* What a section set explicitly, to fill defaults at its end. */
typedef struct section {
    int kind;        /* S_GLOBAL, S_GPU or S_MIG */
    sim_unit *u;
    int set_name, set_uuid, set_pci, set_total, set_free, set_preset, set_profile,
        set_alloc_reserve;
} section;

static int fail(char *err, size_t size, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t size, int line, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(err, size, "line %d: %s", line, msg);
    else
        snprintf(err, size, "%s", msg);
    return -1;
}

/* ---- values ---- */

static int parse_bytes(const char *v, uint64_t *out)
{
    static const struct { const char *s; double m; } units[] = {
        {"", 1}, {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0},
        {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"kB", 1e3},
        {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    };
    if (!isdigit((unsigned char)v[0]))
        return -1;
    errno = 0;
    char *end = NULL;
    double d = strtod(v, &end);
    if (errno || !isfinite(d) || d < 0)
        return -1;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].s) == 0) {
            double b = nearbyint(d * units[i].m);
            if (b > 4.6e18)
                return -1;
            *out = (uint64_t)b;
            return 0;
        }
    return -1;
}

static int parse_int(const char *v, long lo, long hi, long *out)
{
    errno = 0;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* A string value: its bytes as written, except the escapes \\ (a
 * backslash), \n (a newline) and \xHH (any byte but 0), so that a value can
 * hold what a line cannot (a newline, ';', '#', blanks at either end) and
 * the bytes a test wants raw (control bytes, invalid UTF-8). 0 on success,
 * -1 for a bad escape, -2 when the result needs more than size - 1 bytes. */
static int parse_string(const char *v, char *out, size_t size)
{
    size_t n = 0;
    while (*v) {
        int c = (unsigned char)*v++;
        if (c == '\\') {
            if (*v == '\\' || *v == 'n') {
                c = *v++ == 'n' ? '\n' : '\\';
            } else if (*v == 'x' && hexval(v[1]) >= 0 && hexval(v[2]) >= 0) {
                c = hexval(v[1]) * 16 + hexval(v[2]);
                v += 3;
                if (c == 0)
                    return -1;
            } else {
                return -1;
            }
        }
        if (n + 1 >= size)
            return -2;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return 0;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or MIG-), 32 hex digits. */
static int parse_uuid(const char *v, const char *prefix, char *text, size_t tsize,
                      unsigned char bytes[16])
{
    static const int groups[] = {8, 4, 4, 4, 12};
    if (strncasecmp(v, prefix, 4) != 0)
        return -1;
    const char *p = v + 4;
    int nb = 0;
    for (int g = 0; g < 5; g++) {
        for (int i = 0; i < groups[g]; i += 2) {
            int hi = hexval((unsigned char)p[0]), lo = hi < 0 ? -1 : hexval((unsigned char)p[1]);
            if (hi < 0 || lo < 0)
                return -1;
            bytes[nb++] = (unsigned char)(hi << 4 | lo);
            p += 2;
        }
        if (g < 4 && *p++ != '-')
            return -1;
    }
    if (*p)
        return -1;
    snprintf(text, tsize, "%s%s", prefix, v + 4);
    for (char *q = text + 4; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    return 0;
}

static void format_uuid(char *text, size_t tsize, const char *prefix, const unsigned char b[16])
{
    snprintf(text, tsize,
             "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             prefix, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
             b[11], b[12], b[13], b[14], b[15]);
}

/* "dddd:bb:dd.f" (4 or 8 hex digits of domain). */
static int parse_pci(const char *v, sim_unit *u)
{
    unsigned dom, bus, dev, fn;
    char tail;
    if (sscanf(v, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || bus > 0xff ||
        dev > 0x1f || fn > 7 || dom > 0xffff)
        return -1;
    u->pci_domain = dom;
    u->pci_bus = bus;
    u->pci_dev = dev;
    u->pci_fn = fn;
    return 0;
}

int sim_parse_code(const char *text, int *code)
{
    if (sim_code_of_name(text, code) == 0)
        return 0;
    long x;
    if (parse_int(text, 0, 100000, &x) == 0) {
        *code = (int)x;
        return 0;
    }
    return -1;
}

int sim_default_code(const char *func)
{
    static const struct { const char *func; int code; } table[] = {
        {"cudaMalloc", cudaErrorMemoryAllocation},
        {"cudaMallocHost", cudaErrorMemoryAllocation},
        {"cuInit", CUDA_ERROR_UNKNOWN},
        {"cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY},
        {"cublasCreate_v2", CUBLAS_STATUS_NOT_INITIALIZED},
        {"nvmlInit_v2", NVML_ERROR_DRIVER_NOT_LOADED},
        {"nvmlInitWithFlags", NVML_ERROR_DRIVER_NOT_LOADED},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(func, table[i].func) == 0)
            return table[i].code;
    if (strncmp(func, "cublas", 6) == 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (strncmp(func, "nvml", 4) == 0)
        return NVML_ERROR_UNKNOWN;
    if (strncmp(func, "cuda", 4) == 0)
        return cudaErrorUnknown;
    return CUDA_ERROR_UNKNOWN;
}

/* "func:nth[+][=CODE]" or, for async faults, "func:nth". */
static int parse_rule(const char *v, int async, sim_config *cfg, char *err, size_t esize,
                      int line)
{
    if (cfg->nrules == SIM_MAX_RULES)
        return fail(err, esize, line, "at most %d fail/fault_async rules", SIM_MAX_RULES);
    sim_rule r;
    memset(&r, 0, sizeof r);
    const char *colon = strchr(v, ':');
    if (!colon || colon == v || (size_t)(colon - v) >= sizeof r.func)
        return fail(err, esize, line, "'%s': want function:nth%s", v,
                    async ? "" : "[+][=CODE]");
    memcpy(r.func, v, (size_t)(colon - v));
    char *end = NULL;
    errno = 0;
    unsigned long nth = strtoul(colon + 1, &end, 10);
    if (errno || end == colon + 1 || nth == 0)
        return fail(err, esize, line, "'%s': nth must be a count from 1", v);
    r.nth = nth;
    if (!async && *end == '+') {
        r.from = 1;
        end++;
    }
    if (!async && *end == '=') {
        if (sim_parse_code(end + 1, &r.code) != 0)
            return fail(err, esize, line, "'%s': unknown error code '%s'", v, end + 1);
        end += strlen(end);
    }
    if (*end)
        return fail(err, esize, line, "'%s': unexpected '%s'", v, end);
    if (async && strcmp(r.func, "cublasGemmEx") != 0 && strcmp(r.func, "cudaMemcpyAsync") != 0 &&
        strcmp(r.func, "cudaMemsetAsync") != 0 && strcmp(r.func, "cublasSdot_v2") != 0)
        return fail(err, esize, line, "fault_async takes cublasGemmEx, cublasSdot_v2, "
                    "cudaMemcpyAsync or cudaMemsetAsync");
    r.async = async;
    cfg->rules[cfg->nrules++] = r;
    return 0;
}

static void apply_preset(sim_unit *u, const struct preset *p)
{
    snprintf(u->name, sizeof u->name, "%s", p->name);
    u->cc_major = p->major;
    u->cc_minor = p->minor;
    u->sms = p->sms;
    u->clock_khz = p->clock_mhz * 1000;
    u->mem_clock_khz = p->mem_mhz * 1000;
    u->bus_bits = p->bus;
    u->total = p->total;
    u->tflops = p->tflops;
    u->copy_gbps = p->gbps;
    u->memory_gbps = p->mem_gbps;
    u->l2_bytes = (uint64_t)(p->l2_mib * 1048576.0);
    u->pcie_max_gen = p->pcie_gen;
    u->pcie_max_width = 16;
    u->power_limit_mw = (unsigned)p->tdp_w * 1000u;
    u->mig_capable = p->mig;
}

/* "PID:BYTES[:TYPE]": another program on the unit, its device memory
 * (BYTES, or "n/a": NVML cannot say, and nothing is counted as used) and
 * what it does there: compute (the default), graphics, or both. */
static int parse_process(const char *v, sim_unit *u, char *err, size_t esize, int line)
{
    static const struct { const char *name; int type; } types[] = {
        {"compute", SIM_PROC_COMPUTE}, {"graphics", SIM_PROC_GRAPHICS},
        {"both", SIM_PROC_COMPUTE | SIM_PROC_GRAPHICS},
    };
    char bytes[64];
    const char *colon = strchr(v, ':'), *kind = colon ? strchr(colon + 1, ':') : NULL;
    size_t blen = colon ? (kind ? (size_t)(kind - colon - 1) : strlen(colon + 1)) : 0;
    char *end = NULL;
    errno = 0;
    unsigned long pid = strtoul(v, &end, 10);
    int type = kind ? 0 : SIM_PROC_COMPUTE;
    for (size_t i = 0; kind && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(kind + 1, types[i].name) == 0)
            type = types[i].type;
    uint64_t b = 0;
    int na = 0;
    if (blen < sizeof bytes) {
        memcpy(bytes, colon + 1, blen);
        bytes[blen] = '\0';
        na = strcmp(bytes, "n/a") == 0;
    }
    if (errno || end == v || end != colon || pid == 0 || pid > 4194304 || type == 0 ||
        blen >= sizeof bytes || (!na && parse_bytes(bytes, &b) != 0))
        return fail(err, esize, line,
                    "process: '%s': want PID:BYTES[:compute|graphics|both] (e.g. 4242:20GiB, 77:n/a:graphics)", v);
    if (u->nprocs == SIM_MAX_PROCS)
        return fail(err, esize, line, "at most %d processes per unit", SIM_MAX_PROCS);
    u->procs[u->nprocs].pid = (unsigned)pid;
    u->procs[u->nprocs].bytes = b;
    u->procs[u->nprocs].type = type;
    u->procs[u->nprocs].na = na;
    u->nprocs++;
    return 0;
}

/* ---- one key = value ---- */

static int set_key(const char *k, const char *v, section *sec, sim_config *cfg, char *err,
                   size_t esize, int line)
{
    const key *def = NULL;
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, k) == 0 && (keys[i].scope & sec->kind)) {
            def = &keys[i];
            break;
        }
    if (!def) {
        static const char *const where[] = {"", "before the first section", "in [gpu]", "", "in [mig]"};
        return fail(err, esize, line, "unknown key '%s' %s", k, where[sec->kind]);
    }
    char *base = sec->kind == S_GLOBAL ? (char *)cfg : (char *)sec->u;
    sim_unit *u = sec->u;
    uint64_t b;
    long x;
    switch (def->kind) {
    case K_STRING: {
        char s[SIM_TEXT_LEN]; /* the longest string field */
        int r = parse_string(v, s, def->size < sizeof s ? def->size : sizeof s);
        if (r == -1)
            return fail(err, esize, line, "%s: '%s': a backslash starts \\\\, \\n or \\xHH (not \\x00)", k, v);
        if (r != 0)
            return fail(err, esize, line, "%s is longer than %zu bytes", k, def->size - 1);
        memcpy(base + def->off, s, strlen(s) + 1);
        if (strcmp(k, "name") == 0)
            sec->set_name = 1;
        else if (strcmp(k, "profile") == 0)
            sec->set_profile = 1;
        return 0;
    }
    case K_BYTES:
        if (parse_bytes(v, &b) != 0)
            return fail(err, esize, line, "%s: '%s' is not a byte count (e.g. 141GiB, 500MiB, 80e9)", k, v);
        memcpy(base + def->off, &b, sizeof b);
        if (strcmp(k, "total") == 0)
            sec->set_total = 1;
        else if (strcmp(k, "free") == 0)
            sec->set_free = 1;
        else if (strcmp(k, "alloc_reserve") == 0)
            sec->set_alloc_reserve = 1;
        return 0;
    case K_INT:
        if (parse_int(v, 0, 1 << 20, &x) != 0)
            return fail(err, esize, line, "%s: '%s' is not a count", k, v);
        *(int *)(void *)(base + def->off) = (int)x;
        return 0;
    case K_MHZ:
        if (parse_int(v, 0, 1 << 20, &x) != 0)
            return fail(err, esize, line, "%s: '%s' is not a clock in MHz", k, v);
        *(int *)(void *)(base + def->off) = (int)x * 1000;
        return 0;
    case K_DOUBLE: {
        char *end = NULL;
        double d = strtod(v, &end);
        if (end == v || *end || !isfinite(d) || d <= 0)
            return fail(err, esize, line, "%s: '%s' is not a positive number", k, v);
        *(double *)(void *)(base + def->off) = d;
        return 0;
    }
    case K_CC: {
        int ma, mi;
        char tail;
        if (sscanf(v, "%d.%d%c", &ma, &mi, &tail) != 2 || ma < 1 || ma > 99 || mi < 0 || mi > 9)
            return fail(err, esize, line, "cc: '%s' is not a compute capability like 9.0", v);
        u->cc_major = ma;
        u->cc_minor = mi;
        return 0;
    }
    case K_UUID: {
        const char *prefix = sec->kind == S_MIG ? "MIG-" : "GPU-";
        if (parse_uuid(v, prefix, u->uuid, sizeof u->uuid, u->uuid_bytes) != 0)
            return fail(err, esize, line, "uuid: '%s' is not %sxxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", v, prefix);
        sec->set_uuid = 1;
        return 0;
    }
    case K_PCI:
        if (parse_pci(v, u) != 0)
            return fail(err, esize, line, "pci: '%s' is not a PCI bus id like 0000:19:00.0", v);
        sec->set_pci = 1;
        return 0;
    case K_PRESET:
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
            if (strcasecmp(v, presets[i].id) == 0) {
                apply_preset(u, &presets[i]);
                sec->set_preset = sec->set_name = sec->set_total = 1;
                return 0;
            }
        return fail(err, esize, line, "preset: unknown board '%s' (H200, H100, A100-80GB, A100-40GB, L4, RTX4090, T4, K80)", v);
    case K_DRIVER_VERSION: {
        int ma, mi;
        char tail;
        if (sscanf(v, "%d.%d%c", &ma, &mi, &tail) == 2 && ma > 0 && mi >= 0 && mi < 100) {
            cfg->driver_version = ma * 1000 + mi * 10;
            return 0;
        }
        if (parse_int(v, 0, 99999, &x) == 0) { /* as cuDriverGetVersion gives it, even 1 */
            cfg->driver_version = (int)x;
            return 0;
        }
        return fail(err, esize, line, "driver_version: '%s' is not a CUDA version like 13.0 or 12040", v);
    }
    case K_CODE: {
        int code;
        if (sim_parse_code(v, &code) != 0)
            return fail(err, esize, line, "%s: unknown error code '%s'", k, v);
        *(int *)(void *)(base + def->off) = code;
        return 0;
    }
    case K_MODE:
        if (strcmp(v, "eager") == 0)
            cfg->deferred = 0;
        else if (strcmp(v, "deferred") == 0)
            cfg->deferred = 1;
        else
            return fail(err, esize, line, "mode: '%s' (eager or deferred)", v);
        return 0;
    case K_BUG:
        if (strcmp(v, "none") == 0)
            cfg->gemm_bug = SIM_BUG_NONE;
        else if (strcmp(v, "rowmajor") == 0)
            cfg->gemm_bug = SIM_BUG_ROWMAJOR;
        else if (strcmp(v, "drop_last_k") == 0)
            cfg->gemm_bug = SIM_BUG_DROP_LAST_K;
        else if (strcmp(v, "unwritten") == 0)
            cfg->gemm_bug = SIM_BUG_UNWRITTEN;
        else
            return fail(err, esize, line, "gemm_bug: '%s' (none, rowmajor, drop_last_k, unwritten)", v);
        return 0;
    case K_DOT_BUG:
        if (strcmp(v, "none") == 0)
            cfg->dot_bug = 0;
        else if (strcmp(v, "half") == 0)
            cfg->dot_bug = 1;
        else
            return fail(err, esize, line, "dot_bug: '%s' (none, half)", v);
        return 0;
    case K_PERCENT:
        if (parse_int(v, 0, 100, &x) != 0)
            return fail(err, esize, line, "%s: '%s' is not a percent (0-100)", k, v);
        *(int *)(void *)(base + def->off) = (int)x;
        return 0;
    case K_WATTS: {
        char *end = NULL;
        double w = strtod(v, &end);
        while (end && *end == ' ')
            end++;
        if (end == v || (*end && strcmp(end, "W") != 0) || !isfinite(w) || w <= 0 || w > 1e5)
            return fail(err, esize, line, "%s: '%s' is not a power in watts (e.g. 350 or 87.5W)", k, v);
        *(unsigned *)(void *)(base + def->off) = (unsigned)nearbyint(w * 1000.0);
        return 0;
    }
    case K_LINK: {
        int gen, width;
        char tail;
        if (sscanf(v, "%dx%d%c", &gen, &width, &tail) != 2 || gen < 1 || gen > 9 ||
            (width != 1 && width != 2 && width != 4 && width != 8 && width != 16 && width != 32))
            return fail(err, esize, line, "%s: '%s' is not a PCIe link like 5x16 (generation x lanes)", k, v);
        if (strcmp(k, "pcie") == 0) {
            u->pcie_gen = gen;
            u->pcie_width = width;
        } else if (strcmp(k, "pcie_idle") == 0) {
            u->pcie_idle_gen = gen;
            u->pcie_idle_width = width;
        } else {
            u->pcie_max_gen = gen;
            u->pcie_max_width = width;
        }
        return 0;
    }
    case K_PROCESS:
        return parse_process(v, u, err, esize, line);
    case K_ID:
        if (parse_int(v, 0, 1 << 16, &x) != 0)
            return fail(err, esize, line, "%s: '%s' is not a number from 0", k, v);
        *(int *)(void *)(base + def->off) = (int)x;
        return 0;
    case K_ACCESS:
        if (strcmp(v, "denied") == 0)
            u->nvml_denied = 1;
        else if (strcmp(v, "ok") == 0)
            u->nvml_denied = 0;
        else
            return fail(err, esize, line, "nvml_access: '%s' (ok or denied)", v);
        return 0;
    case K_FAIL:
        return parse_rule(v, 0, cfg, err, esize, line);
    case K_FAIL_LATE:
        if (parse_rule(v, 0, cfg, err, esize, line) != 0)
            return -1;
        cfg->rules[cfg->nrules - 1].late = 1;
        return 0;
    case K_FAULT_ASYNC:
        return parse_rule(v, 1, cfg, err, esize, line);
    }
    return fail(err, esize, line, "internal: key '%s' has no handler", k);
}

/* A MIG instance's profile, name, slices and ids, from what was given:
 * the profile, else the one its name ends with ("NVIDIA H200 MIG
 * 1g.18gb"), else "<slices>g.<GB>gb"; the name "<GPU's name> MIG
 * <profile>"; the slices from the profile ("3g" is 3), else 1; the GPU
 * instance id its place among its GPU's instances (from 1), the compute
 * instance id 0. */
static void mig_profile(section *sec, sim_config *cfg)
{
    sim_unit *u = sec->u;
    const sim_unit *p = &cfg->units[u->parent];
    const char *tag = strstr(u->name, "MIG ");
    if (!sec->set_profile && sec->set_name && tag)
        snprintf(u->profile, sizeof u->profile, "%s", tag + 4);
    if (u->slices < 0) {
        int n = atoi(u->profile);
        u->slices = n > 0 && strchr(u->profile, 'g') ? n : 1;
    }
    if (!u->profile[0])
        snprintf(u->profile, sizeof u->profile, "%dg.%llugb", u->slices,
                 (unsigned long long)((u->total + 500000000u) / 1000000000u));
    if (!sec->set_name)
        snprintf(u->name, sizeof u->name, "%.58s MIG %s", p->name, u->profile);
    if (u->gi < 0) {
        int k = 1;
        for (const sim_unit *o = p + 1; o < u; o++)
            k += o->parent == u->parent;
        u->gi = k;
    }
    if (u->ci < 0)
        u->ci = 0;
}

/* Fill what a finished section left unset. */
static int finish(section *sec, sim_config *cfg, char *err, size_t esize)
{
    if (sec->kind == S_GLOBAL)
        return 0;
    sim_unit *u = sec->u;
    int idx = (int)(u - cfg->units);
    if (sec->kind == S_GPU) {
        if (!sec->set_preset && !sec->set_name)
            snprintf(u->name, sizeof u->name, "Simulated GPU %d", idx);
        if (!sec->set_total)
            u->total = UINT64_C(40) << 30;
        if (!sec->set_pci) {
            u->pci_bus = (unsigned)(0x18 + 0x10 * idx) & 0xff;
            u->pci_domain = u->pci_dev = u->pci_fn = 0;
        }
    } else {
        const sim_unit *p = &cfg->units[u->parent];
        if (!sec->set_total)
            u->total = p->total / 8;
        mig_profile(sec, cfg);
        if (!u->sms)
            u->sms = p->sms / 7 ? p->sms / 7 : 1;
        u->cc_major = p->cc_major;
        u->cc_minor = p->cc_minor;
        u->clock_khz = p->clock_khz;
        u->mem_clock_khz = p->mem_clock_khz;
        u->bus_bits = p->bus_bits;
        u->pci_domain = p->pci_domain;
        u->pci_bus = p->pci_bus;
        u->pci_dev = p->pci_dev;
        u->pci_fn = p->pci_fn;
        if (!u->tflops)
            u->tflops = p->tflops / 7;
        if (!u->copy_gbps)
            u->copy_gbps = p->copy_gbps;
        if (!u->memory_gbps)
            u->memory_gbps = p->memory_gbps / 7;
        if (!u->pageable_gbps)
            u->pageable_gbps = p->pageable_gbps;
        u->l2_bytes = p->l2_bytes;
    }
    if (!sec->set_free)
        u->free0 = u->total;
    if (u->free0 > u->total)
        return fail(err, esize, 0, "unit %d (%s): free is larger than total", idx, u->name);
    /* What the driver keeps back of free memory when it maps an allocation
     * (page tables, its own heaps): 1/2048 of the memory in whole pages,
     * 32 MiB on a 64 GiB board, as memory testers have measured there. */
    if (!sec->set_alloc_reserve)
        u->alloc_reserve = (u->total / 2048 + SIM_PAGE - 1) / SIM_PAGE * SIM_PAGE;
    if (!sec->set_uuid) {
        unsigned char b[16];
        uint64_t s = UINT64_C(0x5eed) + (uint64_t)idx * UINT64_C(0x9e3779b97f4a7c15);
        for (int i = 0; i < 16; i++) {
            s ^= s >> 31;
            s *= UINT64_C(0xbf58476d1ce4e5b9);
            b[i] = (unsigned char)(s >> 56);
        }
        b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
        b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
        memcpy(u->uuid_bytes, b, 16);
        format_uuid(u->uuid, sizeof u->uuid, sec->kind == S_MIG ? "MIG-" : "GPU-", b);
    }
    if (!u->cc_major) {
        u->cc_major = 8;
        u->cc_minor = 0;
    }
    /* Without a preset, a GPU from compute capability 8.0 supports MIG. */
    if (sec->kind == S_GPU && !sec->set_preset)
        u->mig_capable = u->cc_major >= 8;

    if (!u->sms)
        u->sms = 108;
    if (!u->clock_khz)
        u->clock_khz = 1410000;
    if (!u->mem_clock_khz)
        u->mem_clock_khz = 1215000;
    if (!u->bus_bits)
        u->bus_bits = 5120;
    if (!u->tflops)
        u->tflops = 19.5;
    if (!u->copy_gbps)
        u->copy_gbps = 25.0;
    /* The memory's rate: 40 times the link's without a preset (the time
     * model of copies and memsets before it had a key of its own). */
    if (!u->memory_gbps)
        u->memory_gbps = 40.0 * u->copy_gbps;
    if (!u->pageable_gbps)
        u->pageable_gbps = u->copy_gbps / 2.0;
    if (!u->l2_bytes)
        u->l2_bytes = UINT64_C(40) << 20;
    /* NVML's figures of an idle GPU (a MIG instance answers none of them). */
    if (!u->temp_c)
        u->temp_c = 32;
    if (!u->power_limit_mw)
        u->power_limit_mw = 300000;
    if (!u->power_mw)
        u->power_mw = u->power_limit_mw / 10;
    if (!u->pcie_max_gen) {
        u->pcie_max_gen = 4;
        u->pcie_max_width = 16;
    }
    if (!u->pcie_gen) {
        u->pcie_gen = u->pcie_max_gen;
        u->pcie_width = u->pcie_max_width;
    }
    if (!u->pcie_idle_gen) {
        u->pcie_idle_gen = u->pcie_gen;
        u->pcie_idle_width = u->pcie_width;
    }
    return 0;
}

static void reset(sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->driver_version = 13000;
    snprintf(cfg->driver_string, sizeof cfg->driver_string, "%s", "580.65.06");
    cfg->ctx_bytes = UINT64_C(500) << 20;
    cfg->gemm_launch_ns = 5000;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* One logical line (no ';' or newline in it). */
static int one_line(char *ln, section *sec, sim_config *cfg, char *err, size_t esize, int line)
{
    char *hash = strchr(ln, '#');
    if (hash)
        *hash = '\0';
    ln = trim(ln);
    if (!*ln)
        return 0;
    if (*ln == '[') {
        if (finish(sec, cfg, err, esize) != 0)
            return -1;
        int kind;
        if (strcmp(ln, "[gpu]") == 0)
            kind = S_GPU;
        else if (strcmp(ln, "[mig]") == 0)
            kind = S_MIG;
        else
            return fail(err, esize, line, "unknown section %s ([gpu] or [mig])", ln);
        if (cfg->nunits == SIM_MAX_UNITS)
            return fail(err, esize, line, "at most %d GPUs and MIG instances", SIM_MAX_UNITS);
        int parent = -1;
        if (kind == S_MIG) {
            for (int i = cfg->nunits - 1; i >= 0 && parent < 0; i--)
                if (cfg->units[i].parent < 0)
                    parent = i;
            if (parent < 0)
                return fail(err, esize, line, "[mig] must follow a [gpu]");
            cfg->units[parent].nmig++;
        }
        memset(sec, 0, sizeof *sec);
        sec->kind = kind;
        sec->u = &cfg->units[cfg->nunits++];
        memset(sec->u, 0, sizeof *sec->u);
        sec->u->parent = parent;
        sec->u->gi = sec->u->ci = sec->u->slices = -1;
        return 0;
    }
    char *eq = strchr(ln, '=');
    if (!eq)
        return fail(err, esize, line, "'%s': want key = value", ln);
    *eq = '\0';
    return set_key(trim(ln), trim(eq + 1), sec, cfg, err, esize, line);
}

int sim_config_parse(const char *text, sim_config *cfg, char *err, size_t esize)
{
    reset(cfg);
    char *copy = strdup(text);
    if (!copy)
        return fail(err, esize, 0, "out of memory");
    section sec;
    memset(&sec, 0, sizeof sec);
    sec.kind = S_GLOBAL;
    int line = 1, r = 0;
    char *p = copy;
    while (r == 0 && *p) {
        size_t n = strcspn(p, ";\n");
        char end = p[n];
        p[n] = '\0';
        r = one_line(p, &sec, cfg, err, esize, line);
        line += end == '\n';
        p += n + (end != '\0');
    }
    if (r == 0)
        r = finish(&sec, cfg, err, esize);
    free(copy);
    for (int i = 0; r == 0 && i < cfg->nunits; i++)
        if (cfg->units[i].nmig > 0 && !cfg->units[i].mig_capable)
            r = fail(err, esize, 0, "GPU %d (%s) has MIG instances but does not support MIG", i,
                     cfg->units[i].name);
    for (int i = 0; r == 0 && i < cfg->nunits; i++)
        for (int j = 0; r == 0 && j < i; j++) {
            const sim_unit *a = &cfg->units[i], *b = &cfg->units[j];
            if (strcasecmp(a->uuid, b->uuid) == 0)
                r = fail(err, esize, 0, "units %d and %d have the same UUID", j, i);
            else if (a->parent < 0 && b->parent < 0 && a->pci_domain == b->pci_domain &&
                     a->pci_bus == b->pci_bus && a->pci_dev == b->pci_dev && a->pci_fn == b->pci_fn)
                r = fail(err, esize, 0, "GPUs %d and %d have the same PCI bus id", j, i);
        }
    return r;
}

int sim_config_line(const char *text, sim_config *cfg, char *err, size_t esize)
{
    char buf[512];
    if (strlen(text) >= sizeof buf)
        return fail(err, esize, 0, "line too long");
    snprintf(buf, sizeof buf, "%s", text);
    if (strpbrk(buf, ";\n[") || !strchr(buf, '='))
        return fail(err, esize, 0, "'%s': one key = value line of the process-wide section", text);
    section sec;
    memset(&sec, 0, sizeof sec);
    sec.kind = S_GLOBAL;
    return one_line(buf, &sec, cfg, err, esize, 0);
}
