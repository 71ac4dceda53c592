/*
 * devices.c - device enumeration (the CPU, then every CUDA device in ordinal
 * order), device attributes, and the public CUDA-availability calls.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "cpu_blas.h"
#include "nvml.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- CPU ----------------------------------------------------------------- */

/* Is `name` one of the whitespace-separated tokens of `flags`? */
static int has_flag(const char *flags, const char *name)
{
    size_t nl = strlen(name);
    const char *p = flags;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *start = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if ((size_t)(p - start) == nl && memcmp(start, name, nl) == 0)
            return 1;
    }
    return 0;
}

int gp_simd_from_flags(const char *flags)
{
    if (!flags)
        return GPUPROBE_SIMD_NONE;
    int avx2_fma = has_flag(flags, "avx2") && has_flag(flags, "fma");
    if (avx2_fma && has_flag(flags, "avx512f"))
        return GPUPROBE_SIMD_AVX512;
    if (avx2_fma)
        return GPUPROBE_SIMD_AVX2_FMA;
    if (has_flag(flags, "avx"))
        return GPUPROBE_SIMD_AVX;
    if (has_flag(flags, "sse4_2"))
        return GPUPROBE_SIMD_SSE4_2;
    return GPUPROBE_SIMD_NONE;
}

/* Trim ASCII whitespace at both ends, in place; returns the start. */
static char *trim(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Read the fields we need from /proc/cpuinfo: the model name, the x86
 * "flags" line (SIMD) and "cpu MHz". Stops once the first processor's block
 * has given them; later blocks repeat the same values. -1 when out of
 * memory; a missing file is not an error. */
static int read_cpuinfo(gp_device *cpu, const char *sysroot, int *simd,
                        double *mhz)
{
    /* Lines are read into a fixed heap buffer: a "flags" line is ~1.5 KiB
     * on current x86 CPUs; a longer line is skipped whole, never grown
     * into. */
    enum { LINE = 8192 };
    char *path = gp_path_join(sysroot, "/proc/cpuinfo", NULL);
    char *line = path ? malloc(LINE) : NULL;
    if (!line) {
        int oom = path || errno == ENOMEM; /* else: a sysroot too long */
        free(path);
        return oom ? -1 : 0;
    }
    FILE *f = fopen(path, "re");
    free(path);
    if (!f) {
        free(line);
        return 0;
    }
    /* Model name keys by architecture, best first. */
    static const char *const name_keys[] = {"model name", "Processor",
                                            "cpu model", "cpu", "Hardware"};
    size_t best = sizeof name_keys / sizeof name_keys[0];
    int have_flags = 0, have_mhz = 0;
    size_t lines = 0;
    while (fgets(line, LINE, f) && lines++ < 100000) {
        size_t len = strlen(line);
        if (len == LINE - 1 && line[len - 1] != '\n') {
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            continue;
        }
        char *colon = memchr(line, ':', len);
        if (!colon)
            continue;
        *colon = '\0';
        char *key = trim(line);
        char *val = trim(colon + 1);
        for (size_t i = 0; i < best; i++) {
            if (strcmp(key, name_keys[i]) == 0 && val[0]) {
                gp_strlcpy(cpu->name, val, sizeof cpu->name);
                best = i;
                break;
            }
        }
        if (!have_flags && strcmp(key, "flags") == 0) {
            *simd = gp_simd_from_flags(val);
            have_flags = 1;
        } else if (!have_mhz && strcmp(key, "cpu MHz") == 0) {
            char *end = NULL;
            double v = strtod(val, &end);
            if (end != val && v > 0 && v < 1e6) {
                *mhz = v;
                have_mhz = 1;
            }
        }
        if (best == 0 && have_flags && have_mhz)
            break;
    }
    fclose(f);
    free(line);
    return 0;
}

gpuprobe_status gp_cpu_describe(gp_device *cpu, const char *sysroot)
{
    memset(cpu, 0, sizeof *cpu);
    cpu->kind = GPUPROBE_DEVICE_CPU;
    cpu->cuda_index = -1;
    gp_strlcpy(cpu->spec, "cpu", sizeof cpu->spec);

    int simd = GPUPROBE_SIMD_NONE;
    double mhz = 0;
    if (read_cpuinfo(cpu, sysroot, &simd, &mhz) != 0)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    cpu->simd = simd;
    if (cpu->name[0] == '\0') {
        struct utsname u;
        if (uname(&u) == 0)
            gp_snprintf(cpu->name, sizeof cpu->name, "%.64s CPU", u.machine);
        else
            gp_strlcpy(cpu->name, "CPU", sizeof cpu->name);
    }

    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu->logical_cores = n > 0 && n < INT32_MAX ? (int)n : 1;

    /* Clock: cpufreq's maximum (kHz), else cpuinfo's current "cpu MHz". */
    char buf[64];
    uint64_t khz = 0;
    int r = gp_read_file(sysroot, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
                         buf, sizeof buf);
    if (r != 0 && errno == ENOMEM)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    if (r == 0 && gp_parse_cgroup_value(buf, &khz) == 0 && khz > 0 &&
        khz < UINT64_C(1) << 40)
        cpu->clock_khz = (int64_t)khz;
    else if (mhz > 0)
        cpu->clock_khz = (int64_t)(mhz * 1000.0 + 0.5);

    /* Physical RAM from /proc/meminfo, else sysconf. */
    char *mi = NULL;
    uint64_t total = 0, avail = 0;
    if (gp_read_text(sysroot, "/proc/meminfo", GP_FILE_MAX, &mi) != 0 && errno == ENOMEM)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    int parsed = mi && gp_parse_meminfo(mi, &total, &avail) == 0;
    free(mi);
    if (parsed)
        cpu->total_memory = total;
    else {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psz > 0 && (uint64_t)pages <= UINT64_MAX / (uint64_t)psz)
            cpu->total_memory = (uint64_t)pages * (uint64_t)psz;
    }
    /* The BLAS attributes are filled on first request (blas_identity()):
     * OpenBLAS is loaded only when needed, see cpu_blas.h. */
    return GPUPROBE_OK;
}

/* ---- CUDA devices ---------------------------------------------------------- */

static void fake_device(gp_device *d, const gp_fake_cuda_device *f, int i)
{
    d->kind = GPUPROBE_DEVICE_CUDA;
    d->cuda_index = i;
    gp_snprintf(d->spec, sizeof d->spec, "cuda:%d", i);
    gp_strlcpy(d->name, f->name ? f->name : "Simulated GPU", sizeof d->name);
    d->cc_major = f->cc_major;
    d->cc_minor = f->cc_minor;
    d->total_memory = f->total_bytes;
    d->context_bytes = f->context_bytes;
    gp_snprintf(d->uuid, sizeof d->uuid, "GPU-00000000-0000-4000-8000-%012x",
                (unsigned)i);
    gp_snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:%02x:00.0",
                (unsigned)(i + 1) & 0xffu);
    d->nvml_index = d->mig_index = d->mig_mode = d->mig_count = -1;
    d->mig = 0; /* whole GPUs */
    gp_strlcpy(d->nvml_why, "a simulated device of the test seam has no NVML",
               sizeof d->nvml_why);
}

/* Does CUDA_VISIBLE_DEVICES name the MIG instance whose UUID is MIG-<hex>
 * (in full or by a prefix, as CUDA accepts)? Tells an instance without
 * NVML. */
static int visible_names_mig(const char *hex)
{
    const char *p = gp_getenv("CUDA_VISIBLE_DEVICES");
    while (p && *p) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ",");
        size_t n = len;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n > 4 && strncasecmp(p, "MIG-", 4) == 0 && n - 4 <= strlen(hex) &&
            strncasecmp(p + 4, hex, n - 4) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* NVML's view of the CUDA devices list[1..n): each found by its UUID (a
 * MIG instance's own, which then keeps its "MIG-" prefix). */
static void nvml_map(gpuprobe_context *ctx, gp_device *list, size_t n)
{
    const char *why = NULL;
    gp_nvml *nv = n > 1 ? gp_cuda_nvml(ctx, &why) : NULL;
    for (size_t i = 1; i < n; i++) {
        gp_device *d = &list[i];
        const char *hex = d->uuid[0] ? d->uuid + 4 : "";
        d->nvml_index = d->mig_index = d->mig_mode = d->mig_count = -1;
        d->mig = visible_names_mig(hex) ? 1 : -1; /* "" matches no entry */
        gp_nvml_device nd;
        if (!nv) {
            gp_snprintf(d->nvml_why, sizeof d->nvml_why, "NVML is not usable: %s", why);
        } else if (gp_nvml_find(nv, hex, d->pci_bus_id, &nd, d->nvml_why,
                                sizeof d->nvml_why)) {
            d->nvml = nd.h;
            d->nvml_gpu = nd.gpu;
            d->nvml_index = nd.index;
            d->mig = nd.mig;
            d->mig_index = nd.mig_index;
            d->mig_mode = nd.mig_mode;
            d->mig_count = nd.mig_count;
            if (nd.mig)
                gp_strlcpy(d->mig_parent_uuid, nd.gpu_uuid, sizeof d->mig_parent_uuid);
        }
        if (d->mig == 1 && d->uuid[0]) {
            memcpy(d->uuid, "MIG-", 4);
            d->mig_mode = 1;
        }
    }
    if (n > 1 && !nv) {
        /* Say so with the CUDA answer: memory falls back to contexts. */
        size_t used = strlen(ctx->cuda_detail);
        gp_snprintf(ctx->cuda_detail + used, sizeof ctx->cuda_detail - used,
                    "; NVML is not usable (%s): GPU memory is read through a "
                    "CUDA context", why);
        gp_quote_inplace(ctx->cuda_detail);
    }
}

/* ---- enumeration ------------------------------------------------------------ */

gpuprobe_status gp_enumerate(gpuprobe_context *ctx)
{
    if (ctx->enumerated)
        return GPUPROBE_OK;
    if (ctx->env_error[0])
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s", ctx->env_error);

    size_t ncuda = 0;
    if (ctx->fake) {
        ncuda = ctx->fake->devices ? ctx->fake->count : 0;
        ctx->driver_version = 0;
        ctx->runtime_version = 0;
        if (ncuda > 0) {
            ctx->cuda_cause = GPUPROBE_CUDA_AVAILABLE;
            gp_snprintf(ctx->cuda_detail, sizeof ctx->cuda_detail,
                        "%zu simulated CUDA device(s) (test seam)", ncuda);
        } else {
            ctx->cuda_cause = ctx->fake->cause;
            gp_quote(ctx->cuda_detail, sizeof ctx->cuda_detail,
                     ctx->fake->detail ? ctx->fake->detail : "simulated: no CUDA device",
                     SIZE_MAX);
        }
    } else {
        gpuprobe_status st = gp_cuda_load(ctx);
        if (st != GPUPROBE_OK)
            return st;
        ncuda = (size_t)gp_cuda_device_count(ctx);
    }
    if (ncuda > GP_MAX_GPUS)
        ncuda = GP_MAX_GPUS; /* far beyond any real machine; keeps the sizes sane */

    gp_device *list = calloc(1 + ncuda, sizeof *list);
    if (!list)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "out of memory allocating %zu device records", 1 + ncuda);
    if (gp_cpu_describe(&list[0], ctx->sysroot) != GPUPROBE_OK) {
        free(list);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "out of memory reading the CPU's description");
    }

    size_t n = 1;
    for (size_t i = 0; i < ncuda; i++) {
        if (ctx->fake) {
            fake_device(&list[n++], &ctx->fake->devices[i], (int)i);
            continue;
        }
        if (gp_cuda_describe(ctx, &list[n], (int)i) != GPUPROBE_OK) { /* list is calloc'ed */
            n = 1; /* cause set to OTHER: the ordinals cannot be trusted */
            break;
        }
        n++;
    }
    if (!ctx->fake)
        nvml_map(ctx, list, n);
    free(ctx->devices);
    ctx->devices = list;
    ctx->ndevices = n;
    ctx->enumerated = 1;
    return GPUPROBE_OK;
}

gpuprobe_status gp_get_device(gpuprobe_context *ctx, size_t index,
                              const gp_device **dev)
{
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    if (index >= ctx->ndevices)
        return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                       "device index %zu is out of range: there %s %zu device%s "
                       "(0 is the CPU)", index, ctx->ndevices == 1 ? "is" : "are",
                       ctx->ndevices, ctx->ndevices == 1 ? "" : "s");
    *dev = &ctx->devices[index];
    return GPUPROBE_OK;
}

/* ---- public: devices and attributes ------------------------------------------ */

gpuprobe_status gpuprobe_device_count(gpuprobe_context *ctx, size_t *count)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!count)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_device_count: count is NULL");
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    *count = ctx->ndevices;
    return gp_ok(ctx);
}

enum { A_INT, A_STRING };
enum { S_ALL, S_CPU, S_CUDA };

static const struct {
    const char *name;
    int type;
    int scope;
} attr_table[] = {
    [GPUPROBE_ATTR_KIND] = {"KIND", A_INT, S_ALL},
    [GPUPROBE_ATTR_NAME] = {"NAME", A_STRING, S_ALL},
    [GPUPROBE_ATTR_SPEC] = {"SPEC", A_STRING, S_ALL},
    [GPUPROBE_ATTR_CUDA_INDEX] = {"CUDA_INDEX", A_INT, S_CUDA},
    [GPUPROBE_ATTR_UUID] = {"UUID", A_STRING, S_CUDA},
    [GPUPROBE_ATTR_PCI_BUS_ID] = {"PCI_BUS_ID", A_STRING, S_CUDA},
    [GPUPROBE_ATTR_CC_MAJOR] = {"CC_MAJOR", A_INT, S_CUDA},
    [GPUPROBE_ATTR_CC_MINOR] = {"CC_MINOR", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MULTIPROCESSORS] = {"MULTIPROCESSORS", A_INT, S_CUDA},
    [GPUPROBE_ATTR_CLOCK_KHZ] = {"CLOCK_KHZ", A_INT, S_ALL},
    [GPUPROBE_ATTR_MEMORY_CLOCK_KHZ] = {"MEMORY_CLOCK_KHZ", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MEMORY_BUS_BITS] = {"MEMORY_BUS_BITS", A_INT, S_CUDA},
    [GPUPROBE_ATTR_TOTAL_MEMORY] = {"TOTAL_MEMORY", A_INT, S_ALL},
    [GPUPROBE_ATTR_LOGICAL_CORES] = {"LOGICAL_CORES", A_INT, S_CPU},
    [GPUPROBE_ATTR_SIMD] = {"SIMD", A_INT, S_CPU},
    [GPUPROBE_ATTR_BLAS_CORE] = {"BLAS_CORE", A_STRING, S_CPU},
    [GPUPROBE_ATTR_BLAS_THREADS] = {"BLAS_THREADS", A_INT, S_CPU},
    [GPUPROBE_ATTR_BLAS_CONFIG] = {"BLAS_CONFIG", A_STRING, S_CPU},
    [GPUPROBE_ATTR_NVML_INDEX] = {"NVML_INDEX", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MIG_MODE] = {"MIG_MODE", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MIG_INSTANCE] = {"MIG_INSTANCE", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MIG_INDEX] = {"MIG_INDEX", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MIG_PARENT_UUID] = {"MIG_PARENT_UUID", A_STRING, S_CUDA},
    [GPUPROBE_ATTR_MIG_COUNT] = {"MIG_COUNT", A_INT, S_CUDA},
    [GPUPROBE_ATTR_GPU_UTILIZATION] = {"GPU_UTILIZATION", A_INT, S_CUDA},
    [GPUPROBE_ATTR_MEMORY_UTILIZATION] = {"MEMORY_UTILIZATION", A_INT, S_CUDA},
    [GPUPROBE_ATTR_TEMPERATURE_C] = {"TEMPERATURE_C", A_INT, S_CUDA},
    [GPUPROBE_ATTR_POWER_MW] = {"POWER_MW", A_INT, S_CUDA},
    [GPUPROBE_ATTR_POWER_LIMIT_MW] = {"POWER_LIMIT_MW", A_INT, S_CUDA},
    [GPUPROBE_ATTR_COMPUTE_PROCESSES] = {"COMPUTE_PROCESSES", A_INT, S_CUDA},
    [GPUPROBE_ATTR_NUMA_NODE] = {"NUMA_NODE", A_INT, S_CUDA},
    [GPUPROBE_ATTR_LOCAL_CPUS] = {"LOCAL_CPUS", A_STRING, S_CUDA},
    [GPUPROBE_ATTR_PCIE_GEN] = {"PCIE_GEN", A_INT, S_CUDA},
    [GPUPROBE_ATTR_PCIE_WIDTH] = {"PCIE_WIDTH", A_INT, S_CUDA},
    [GPUPROBE_ATTR_PCIE_MAX_GEN] = {"PCIE_MAX_GEN", A_INT, S_CUDA},
    [GPUPROBE_ATTR_PCIE_MAX_WIDTH] = {"PCIE_MAX_WIDTH", A_INT, S_CUDA},
};
#define N_ATTR (sizeof attr_table / sizeof attr_table[0])

/* Common checks of the getters; on success *dev is the device. */
static gpuprobe_status attr_lookup(gpuprobe_context *ctx, const char *fn,
                                   size_t device, gpuprobe_attr attr,
                                   int want_type, const void *out,
                                   const gp_device **dev)
{
    if (!out)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s: value is NULL", fn);
    unsigned a = (unsigned)attr;
    if (a >= N_ATTR || !attr_table[a].name)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%s: unknown attribute %d", fn, (int)attr);
    if (attr_table[a].type != want_type)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "%s: GPUPROBE_ATTR_%s is %s attribute; use %s", fn,
                       attr_table[a].name,
                       attr_table[a].type == A_INT ? "an integer" : "a string",
                       attr_table[a].type == A_INT ? "gpuprobe_device_get_int()"
                                                   : "gpuprobe_device_get_string()");
    gpuprobe_status st = gp_get_device(ctx, device, dev);
    if (st != GPUPROBE_OK)
        return st;
    int scope = attr_table[a].scope;
    if ((scope == S_CPU && (*dev)->kind != GPUPROBE_DEVICE_CPU) ||
        (scope == S_CUDA && (*dev)->kind != GPUPROBE_DEVICE_CUDA))
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "GPUPROBE_ATTR_%s applies to %s devices only; device %zu "
                       "(%s) is %s", attr_table[a].name,
                       scope == S_CPU ? "CPU" : "CUDA", device, (*dev)->spec,
                       (*dev)->kind == GPUPROBE_DEVICE_CPU ? "the CPU" : "a CUDA device");
    return GPUPROBE_OK;
}

static gpuprobe_status unknown_value(gpuprobe_context *ctx, gpuprobe_attr attr,
                                     size_t device, const gp_device *dev)
{
    return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                   "GPUPROBE_ATTR_%s of device %zu (%s) is not known on this system",
                   attr_table[(unsigned)attr].name, device, dev->spec);
}

/* Not known, and why. */
static gpuprobe_status unknown_because(gpuprobe_context *ctx, gpuprobe_attr attr,
                                       size_t device, const gp_device *dev,
                                       const char *why)
{
    return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                   "GPUPROBE_ATTR_%s of device %zu (%s) is not known: %s",
                   attr_table[(unsigned)attr].name, device, dev->spec, why);
}

/* An NVML figure read now: of the device itself, or of its GPU (the
 * physical ones, which a MIG instance shares). */
static gpuprobe_status nvml_now(gpuprobe_context *ctx, gpuprobe_attr attr, size_t device,
                                const gp_device *d, int64_t *v, char *why, size_t why_size)
{
    char spare[8];
    if (!why) {
        why = spare;
        why_size = sizeof spare;
    }
    static const struct {
        gpuprobe_attr attr;
        gp_nvml_query q;
        int of_gpu;
    } map[] = {
        {GPUPROBE_ATTR_GPU_UTILIZATION, GP_NVML_GPU_UTILIZATION, 0},
        {GPUPROBE_ATTR_MEMORY_UTILIZATION, GP_NVML_MEMORY_UTILIZATION, 0},
        {GPUPROBE_ATTR_COMPUTE_PROCESSES, GP_NVML_PROCESSES, 0},
        {GPUPROBE_ATTR_TEMPERATURE_C, GP_NVML_TEMPERATURE, 1},
        {GPUPROBE_ATTR_POWER_MW, GP_NVML_POWER, 1},
        {GPUPROBE_ATTR_POWER_LIMIT_MW, GP_NVML_POWER_LIMIT, 1},
        {GPUPROBE_ATTR_PCIE_GEN, GP_NVML_PCIE_GEN, 1},
        {GPUPROBE_ATTR_PCIE_WIDTH, GP_NVML_PCIE_WIDTH, 1},
        {GPUPROBE_ATTR_PCIE_MAX_GEN, GP_NVML_PCIE_MAX_GEN, 1},
        {GPUPROBE_ATTR_PCIE_MAX_WIDTH, GP_NVML_PCIE_MAX_WIDTH, 1},
    };
    size_t k = 0;
    while (k < sizeof map / sizeof map[0] && map[k].attr != attr)
        k++;
    if (k == sizeof map / sizeof map[0])
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL, "attribute %d is no NVML figure", (int)attr);
    /* Without a handle, nvml_why says why (NVML not usable, the device
     * unknown to it); with one, NVML is loaded. */
    gp_nvml *n = d->nvml ? gp_cuda_nvml(ctx, NULL) : NULL;
    if (!n) {
        gp_strlcpy(why, d->nvml_why, why_size);
        return unknown_because(ctx, attr, device, d, d->nvml_why);
    }
    void *h = map[k].of_gpu ? d->nvml_gpu : d->nvml;
    char e[256];
    if (!h) {
        gp_strlcpy(why, "NVML gives no handle of its GPU", why_size);
        return unknown_because(ctx, attr, device, d, why);
    }
    const char *call = NULL;
    int rc = gp_nvml_query_int(n, h, map[k].q, v, &call);
    if (rc != GP_NVML_SUCCESS) {
        if (d->mig && rc == GP_NVML_ERROR_NOT_SUPPORTED)
            gp_strlcpy(why, "NVML does not report it for a MIG instance", why_size);
        else
            gp_nvml_words(n, rc, why, why_size);
        gp_nvml_error(n, call, rc, e, sizeof e);
        return unknown_because(ctx, attr, device, d, e);
    }
    return GPUPROBE_OK;
}

/* "/sys/bus/pci/devices/<bus id in lower case>/<file>" into buf; a bus id
 * that is not hex digits, ':' and '.' is refused (it becomes a path). */
static gpuprobe_status pci_sysfs(gpuprobe_context *ctx, gpuprobe_attr attr, size_t device,
                                 const gp_device *d, const char *file, char *buf,
                                 size_t size)
{
    char path[96], bus[sizeof d->pci_bus_id];
    size_t i = 0;
    for (; d->pci_bus_id[i]; i++) {
        char c = d->pci_bus_id[i];
        if (!isxdigit((unsigned char)c) && c != ':' && c != '.')
            return unknown_because(ctx, attr, device, d, "the PCI bus id is not known");
        bus[i] = (char)tolower((unsigned char)c);
    }
    bus[i] = '\0';
    if (i == 0)
        return unknown_because(ctx, attr, device, d, "the PCI bus id is not known");
    gp_snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", bus, file);
    if (gp_read_file(ctx->sysroot, path, buf, size) != 0) {
        if (errno == ENOMEM)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
        char e[160];
        gp_snprintf(e, sizeof e, "cannot read %s: %s", path, strerror(errno));
        return unknown_because(ctx, attr, device, d, e);
    }
    size_t n = strlen(buf);
    while (n && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    return GPUPROBE_OK;
}

/* NVML's index and the MIG layout, read at enumeration. */
static gpuprobe_status placement(gpuprobe_context *ctx, gpuprobe_attr attr, size_t device,
                                 const gp_device *d, int64_t *v)
{
    *v = attr == GPUPROBE_ATTR_NVML_INDEX     ? d->nvml_index
         : attr == GPUPROBE_ATTR_MIG_MODE     ? d->mig_mode
         : attr == GPUPROBE_ATTR_MIG_INSTANCE ? d->mig
         : attr == GPUPROBE_ATTR_MIG_INDEX    ? (d->mig == 1 ? d->mig_index : -1)
                                              : d->mig_count;
    if (*v >= 0)
        return GPUPROBE_OK;
    return unknown_because(ctx, attr, device, d,
                           attr == GPUPROBE_ATTR_MIG_INDEX && d->mig == 0
                               ? "the device is a whole GPU, not a MIG instance"
                           : d->nvml ? "NVML did not say"
                                     : d->nvml_why);
}

/* The GPU's NUMA node, from sysfs. */
static gpuprobe_status numa_node(gpuprobe_context *ctx, gpuprobe_attr attr, size_t device,
                                 const gp_device *d, int64_t *v)
{
    char buf[32];
    gpuprobe_status st = pci_sysfs(ctx, attr, device, d, "numa_node", buf, sizeof buf);
    if (st != GPUPROBE_OK)
        return st;
    char *end = NULL;
    errno = 0;
    long node = strtol(buf, &end, 10);
    if (end == buf || *end || errno || node < -1 || node > 65535)
        return unknown_because(ctx, attr, device, d, "numa_node holds no node number");
    if (node < 0)
        return unknown_because(ctx, attr, device, d,
                               "the platform gives the GPU no NUMA node (numa_node is -1)");
    *v = node;
    return GPUPROBE_OK;
}

/* A measured quantity, whose zero means "not known" (never an index, a
 * kind, a compute capability or the SIMD level). */
static int measured(gpuprobe_attr attr)
{
    switch (attr) {
    case GPUPROBE_ATTR_MULTIPROCESSORS:
    case GPUPROBE_ATTR_CLOCK_KHZ:
    case GPUPROBE_ATTR_MEMORY_CLOCK_KHZ:
    case GPUPROBE_ATTR_MEMORY_BUS_BITS:
    case GPUPROBE_ATTR_TOTAL_MEMORY:
    case GPUPROBE_ATTR_LOGICAL_CORES:
    case GPUPROBE_ATTR_BLAS_THREADS:
        return 1;
    default:
        return 0;
    }
}

gpuprobe_status gp_device_nvml_int(gpuprobe_context *ctx, size_t device, gpuprobe_attr attr,
                                   int64_t *value, char *why, size_t why_size)
{
    const gp_device *d = NULL;
    gpuprobe_status st = gp_get_device(ctx, device, &d);
    return st == GPUPROBE_OK ? nvml_now(ctx, attr, device, d, value, why, why_size) : st;
}

gpuprobe_status gpuprobe_device_get_int(gpuprobe_context *ctx, size_t device,
                                        gpuprobe_attr attr, int64_t *value)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    const gp_device *d = NULL;
    gpuprobe_status st = attr_lookup(ctx, "gpuprobe_device_get_int", device,
                                     attr, A_INT, value, &d);
    if (st != GPUPROBE_OK)
        return st;
    int64_t v = 0;
    switch (attr) {
    case GPUPROBE_ATTR_KIND: v = d->kind; break;
    case GPUPROBE_ATTR_CUDA_INDEX: v = d->cuda_index; break;
    case GPUPROBE_ATTR_CC_MAJOR: v = d->cc_major; break;
    case GPUPROBE_ATTR_CC_MINOR: v = d->cc_minor; break;
    case GPUPROBE_ATTR_MULTIPROCESSORS: v = d->multiprocessors; break;
    case GPUPROBE_ATTR_CLOCK_KHZ: v = d->clock_khz; break;
    case GPUPROBE_ATTR_MEMORY_CLOCK_KHZ: v = d->memory_clock_khz; break;
    case GPUPROBE_ATTR_MEMORY_BUS_BITS: v = d->memory_bus_bits; break;
    case GPUPROBE_ATTR_TOTAL_MEMORY:
        if (d->total_memory > (uint64_t)INT64_MAX)
            return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW,
                           "total memory of device %zu does not fit int64_t", device);
        v = (int64_t)d->total_memory;
        break;
    case GPUPROBE_ATTR_LOGICAL_CORES: v = d->logical_cores; break;
    case GPUPROBE_ATTR_SIMD: v = d->simd; break;
    case GPUPROBE_ATTR_BLAS_THREADS: {
        const gp_openblas *ob = NULL;
        st = gp_openblas_get(ctx, &ob);
        if (st != GPUPROBE_OK)
            return st;
        v = ob->get_num_threads(); /* read now: it is process-wide and can change */
        break;
    }
    case GPUPROBE_ATTR_NVML_INDEX:
    case GPUPROBE_ATTR_MIG_MODE:
    case GPUPROBE_ATTR_MIG_INSTANCE:
    case GPUPROBE_ATTR_MIG_INDEX:
    case GPUPROBE_ATTR_MIG_COUNT:
        st = placement(ctx, attr, device, d, &v);
        if (st != GPUPROBE_OK)
            return st;
        break;
    case GPUPROBE_ATTR_GPU_UTILIZATION:
    case GPUPROBE_ATTR_MEMORY_UTILIZATION:
    case GPUPROBE_ATTR_TEMPERATURE_C:
    case GPUPROBE_ATTR_POWER_MW:
    case GPUPROBE_ATTR_POWER_LIMIT_MW:
    case GPUPROBE_ATTR_COMPUTE_PROCESSES:
    case GPUPROBE_ATTR_PCIE_GEN:
    case GPUPROBE_ATTR_PCIE_WIDTH:
    case GPUPROBE_ATTR_PCIE_MAX_GEN:
    case GPUPROBE_ATTR_PCIE_MAX_WIDTH:
        st = nvml_now(ctx, attr, device, d, &v, NULL, 0);
        if (st != GPUPROBE_OK)
            return st;
        break;
    case GPUPROBE_ATTR_NUMA_NODE:
        st = numa_node(ctx, attr, device, d, &v);
        if (st != GPUPROBE_OK)
            return st;
        break;
    default:
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL,
                       "attribute %d has no integer getter", (int)attr);
    }
    if (v <= 0 && measured(attr))
        return unknown_value(ctx, attr, device, d);
    *value = v;
    return gp_ok(ctx);
}

gpuprobe_status gpuprobe_device_get_string(gpuprobe_context *ctx, size_t device,
                                           gpuprobe_attr attr, const char **value)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    const gp_device *d = NULL;
    gpuprobe_status st = attr_lookup(ctx, "gpuprobe_device_get_string", device,
                                     attr, A_STRING, value, &d);
    if (st != GPUPROBE_OK)
        return st;
    if ((attr == GPUPROBE_ATTR_BLAS_CORE || attr == GPUPROBE_ATTR_BLAS_CONFIG) &&
        d->blas_core[0] == '\0') {
        /* First request: load OpenBLAS and keep its identity with the CPU
         * device (it does not change while the process runs). */
        const gp_openblas *ob = NULL;
        st = gp_openblas_get(ctx, &ob);
        if (st != GPUPROBE_OK)
            return st;
        gp_device *cpu = &ctx->devices[device];
        const char *core = ob->get_corename();
        const char *config = ob->get_config();
        gp_strlcpy(cpu->blas_core, core && core[0] ? core : "unknown", sizeof cpu->blas_core);
        gp_strlcpy(cpu->blas_config, config ? config : "", sizeof cpu->blas_config);
    }
    const char *s = NULL;
    switch (attr) {
    case GPUPROBE_ATTR_NAME: s = d->name; break;
    case GPUPROBE_ATTR_SPEC: s = d->spec; break;
    case GPUPROBE_ATTR_UUID: s = d->uuid; break;
    case GPUPROBE_ATTR_PCI_BUS_ID: s = d->pci_bus_id; break;
    case GPUPROBE_ATTR_BLAS_CORE: s = d->blas_core; break;
    case GPUPROBE_ATTR_BLAS_CONFIG: s = d->blas_config; break;
    case GPUPROBE_ATTR_MIG_PARENT_UUID:
        if (d->mig_parent_uuid[0] == '\0')
            return unknown_because(ctx, attr, device, d,
                                   d->mig == 0 ? "the device is a whole GPU, not a MIG instance"
                                   : d->nvml   ? "NVML did not say"
                                               : d->nvml_why);
        s = d->mig_parent_uuid;
        break;
    case GPUPROBE_ATTR_LOCAL_CPUS: {
        gp_device *mut = &ctx->devices[device]; /* kept with the device */
        st = pci_sysfs(ctx, attr, device, d, "local_cpulist", mut->local_cpus,
                       sizeof mut->local_cpus);
        if (st != GPUPROBE_OK)
            return st;
        s = d->local_cpus;
        break;
    }
    default:
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL,
                       "attribute %d has no string getter", (int)attr);
    }
    if (s[0] == '\0')
        return unknown_value(ctx, attr, device, d);
    *value = s;
    return gp_ok(ctx);
}

/* ---- public: CUDA availability ------------------------------------------------ */

gpuprobe_status gpuprobe_cuda_status(gpuprobe_context *ctx,
                                     gpuprobe_cuda_cause *cause,
                                     const char **detail)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!cause)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_cuda_status: cause is NULL");
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    *cause = ctx->cuda_cause;
    if (detail)
        *detail = ctx->cuda_detail;
    return gp_ok(ctx);
}

static gpuprobe_status version_of(gpuprobe_context *ctx, const char *fn,
                                  const char *what, int known, int *version)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    if (!version)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT, "%s: version is NULL", fn);
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    int v = known ? ctx->driver_version : ctx->runtime_version;
    if (v <= 0)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "the CUDA %s version is not known: %s (%s)", what,
                       gpuprobe_cuda_cause_string(ctx->cuda_cause), ctx->cuda_detail);
    *version = v;
    return gp_ok(ctx);
}

gpuprobe_status gpuprobe_cuda_driver_version(gpuprobe_context *ctx, int *version)
{
    return version_of(ctx, "gpuprobe_cuda_driver_version", "driver", 1, version);
}

gpuprobe_status gpuprobe_cuda_runtime_version(gpuprobe_context *ctx, int *version)
{
    return version_of(ctx, "gpuprobe_cuda_runtime_version", "runtime", 0, version);
}
