/*
 * host_cpu.c - the host's processors and memory modules as the bandwidth
 * measurement needs them, from sysfs under the sysroot test seam: the
 * order threads are placed in (one CPU of each core first, then the other
 * CPUs of the cores), the last-level caches of the CPUs used, and the
 * memory modules of the DMI (SMBIOS) tables with their speed; and the
 * CPUs this process may run on (its affinity mask), which the bandwidth's
 * and the bf16 gemm's threads count. The parsers are pure and fuzzed.
 * Floor 2 (the host's files).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bandwidth_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- parsers ---------------------------------------------------------- */

static int read_uint(const char **p, unsigned long *out)
{
    const char *s = *p;
    unsigned long v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        if (v > (ULONG_MAX - 9) / 10)
            return -1;
        v = v * 10 + (unsigned long)(*s++ - '0');
    }
    *p = s;
    *out = v;
    return 0;
}

int gp_parse_cpu_list(const char *text, unsigned char *set, size_t nbits)
{
    if (!text || !set)
        return -1;
    memset(set, 0, (nbits + 7) / 8);
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\n' || *p == '\0')
        return 0; /* an empty list */
    for (;;) {
        unsigned long lo, hi;
        if (read_uint(&p, &lo) != 0)
            return -1;
        hi = lo;
        if (*p == '-') {
            p++;
            if (read_uint(&p, &hi) != 0 || hi < lo)
                return -1;
        }
        if (hi >= nbits)
            return -1;
        for (unsigned long c = lo; c <= hi; c++)
            set[c / 8] |= (unsigned char)(1u << (c % 8));
        if (*p != ',')
            break;
        p++;
    }
    while (*p == '\n' || *p == ' ')
        p++;
    return *p == '\0' ? 0 : -1;
}

int gp_parse_cache_size(const char *text, uint64_t *bytes)
{
    if (!text || !bytes)
        return -1;
    const char *p = text;
    unsigned long v;
    if (read_uint(&p, &v) != 0)
        return -1;
    uint64_t mult = 1;
    if (*p == 'K')
        mult = 1024;
    else if (*p == 'M')
        mult = 1024 * 1024;
    else if (*p == 'G')
        mult = 1024 * 1024 * 1024;
    if (mult != 1)
        p++;
    while (*p == '\n' || *p == ' ')
        p++;
    if (*p != '\0' || (uint64_t)v > UINT64_MAX / mult)
        return -1;
    *bytes = (uint64_t)v * mult;
    return 0;
}

static unsigned word_at(const unsigned char *raw, size_t off)
{
    return (unsigned)raw[off] | (unsigned)raw[off + 1] << 8;
}

static uint32_t dword_at(const unsigned char *raw, size_t off)
{
    return (uint32_t)word_at(raw, off) | (uint32_t)word_at(raw, off + 2) << 16;
}

/* A speed field (MT/s) of the formatted area of length flen: 0 unknown;
 * 0xFFFF points at the 32-bit extended field. */
static int64_t speed_field(const unsigned char *raw, size_t flen, size_t off, size_t ext)
{
    if (flen < off + 2)
        return 0;
    unsigned s = word_at(raw, off);
    if (s != 0xFFFF)
        return s;
    return flen >= ext + 4 ? (int64_t)(dword_at(raw, ext) & 0x7FFFFFFFu) : 0;
}

int gp_parse_dmi_memory_device(const unsigned char *raw, size_t len, gp_dmi_module *out)
{
    if (!raw || !out || len < 0x17 || raw[0] != 17)
        return -1;
    size_t flen = raw[1];
    if (flen < 0x17 || flen > len)
        return -1;
    memset(out, 0, sizeof *out);
    out->present = word_at(raw, 0x0C) != 0;
    unsigned w = word_at(raw, 0x0A);
    out->width_bits = w == 0xFFFF ? 0 : (int)w;
    /* The configured speed (SMBIOS 2.7) is what the modules run at; the
     * speed (2.3) is what they are rated for. */
    out->mts = speed_field(raw, flen, 0x20, 0x58);
    if (out->mts == 0)
        out->mts = speed_field(raw, flen, 0x15, 0x54);
    return 0;
}

/* ---- threads' CPUs ------------------------------------------------------ */

/* The most CPUs asked of sched_getaffinity(). */
#define GP_MAX_CPUS 8192

/* The calling thread's mask into a new set (*set of *n CPUs, *size
 * bytes; CPU_FREE by the caller): the smallest size from 1024 CPUs up
 * that the kernel takes. 0, or an error number (ENOMEM, or the call's). */
static int affinity(cpu_set_t **set, size_t *n, size_t *size)
{
    for (*n = 1024; *n <= GP_MAX_CPUS; *n *= 2) {
        if (!(*set = CPU_ALLOC(*n)))
            return ENOMEM;
        *size = CPU_ALLOC_SIZE(*n);
        CPU_ZERO_S(*size, *set);
        if (sched_getaffinity(0, *size, *set) == 0)
            return 0;
        int e = errno;
        CPU_FREE(*set);
        *set = NULL;
        if (e != EINVAL)
            return e;
    }
    return ENOMEM;
}

gpuprobe_status gp_host_allowed_cpus(gpuprobe_context *ctx, unsigned char **bits,
                                     size_t *nbits)
{
    cpu_set_t *set;
    size_t n, size;
    int e = affinity(&set, &n, &size);
    if (e == ENOMEM)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating a CPU set for sched_getaffinity");
    if (e != 0)
        return gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "sched_getaffinity failed: %s", strerror(e));
    *bits = calloc(1, n / 8);
    for (size_t c = 0; *bits && c < n; c++)
        if (CPU_ISSET_S(c, size, set))
            (*bits)[c / 8] |= (unsigned char)(1u << (c % 8));
    CPU_FREE(set);
    *nbits = n;
    return *bits ? GPUPROBE_OK
                 : gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the set of allowed CPUs");
}

size_t gp_host_allowed_count(void)
{
    cpu_set_t *set;
    size_t n, size;
    if (affinity(&set, &n, &size) == 0) {
        int count = CPU_COUNT_S(size, set);
        CPU_FREE(set);
        if (count > 0)
            return (size_t)count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (size_t)online : 1;
}


static int in_set(const unsigned char *set, size_t nbits, size_t c)
{
    return c < nbits && (set[c / 8] >> (c % 8) & 1);
}

/* The lowest allowed CPU of c's core (its thread siblings), or c when the
 * topology cannot be read. */
static size_t core_leader(const char *sysroot, const unsigned char *allowed, size_t nbits,
                          size_t c, unsigned char *scratch)
{
    char path[96], text[512];
    gp_snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%zu/topology/thread_siblings_list",
                c);
    if (gp_read_file(sysroot, path, text, sizeof text) != 0 ||
        gp_parse_cpu_list(text, scratch, nbits) != 0 || !in_set(scratch, nbits, c))
        return c;
    for (size_t s = 0; s < c; s++)
        if (in_set(scratch, nbits, s) && in_set(allowed, nbits, s))
            return s;
    return c;
}

size_t gp_host_cpu_order(const char *sysroot, const unsigned char *allowed, size_t nbits,
                         int *out, size_t cap, size_t *cores)
{
    size_t n = 0, first = 0;
    unsigned char *scratch = malloc((nbits + 7) / 8 + 1);
    *cores = 0;
    /* Two sweeps: the leaders of the cores, then the other CPUs. */
    for (int sweep = 0; sweep < 2; sweep++) {
        for (size_t c = 0; c < nbits && n < cap; c++) {
            if (!in_set(allowed, nbits, c))
                continue;
            int leader = !scratch || core_leader(sysroot, allowed, nbits, c, scratch) == c;
            if (leader == (sweep == 0))
                out[n++] = (int)c;
        }
        if (sweep == 0)
            first = n;
    }
    free(scratch);
    *cores = first;
    return n;
}

/* The highest-level data or unified cache of cpu c: its size and the CPUs
 * that share it (which tells one cache from another). 0, or -1. */
static int llc_of(const char *sysroot, int c, uint64_t *bytes, char *shared, size_t ssize)
{
    int best = -1;
    for (int i = 0; i < 16; i++) {
        char path[112], text[64], size[32];
        gp_snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, i);
        if (gp_read_file(sysroot, path, text, sizeof text) != 0)
            break;
        int level = atoi(text);
        gp_snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, i);
        if (gp_read_file(sysroot, path, text, sizeof text) != 0 || strncmp(text, "Instruction", 11) == 0)
            continue;
        gp_snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", c, i);
        uint64_t b;
        if (level <= best || gp_read_file(sysroot, path, size, sizeof size) != 0 ||
            gp_parse_cache_size(size, &b) != 0)
            continue;
        gp_snprintf(path, sizeof path,
                    "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", c, i);
        if (gp_read_file(sysroot, path, shared, ssize) != 0)
            gp_snprintf(shared, ssize, "cpu%d", c); /* its own */
        best = level;
        *bytes = b;
    }
    return best >= 0 ? 0 : -1;
}

int gp_host_llc_bytes(const char *sysroot, const int *cpus, size_t n, uint64_t *bytes)
{
    /* Each distinct cache once: at most one per CPU used. */
    char(*seen)[128] = calloc(n ? n : 1, sizeof *seen);
    if (!seen)
        return -1;
    size_t nseen = 0;
    uint64_t total = 0;
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = 0;
        char shared[128];
        if (llc_of(sysroot, cpus[i], &b, shared, sizeof shared) != 0)
            continue;
        found = 1;
        size_t j = 0;
        while (j < nseen && strcmp(seen[j], shared) != 0)
            j++;
        if (j < nseen)
            continue;
        gp_strlcpy(seen[nseen++], shared, sizeof seen[0]);
        total = total > UINT64_MAX - b ? UINT64_MAX : total + b;
    }
    free(seen);
    *bytes = total;
    return found ? 0 : -1;
}

/* ---- memory modules (DMI type 17) ------------------------------------------- */

/* One entry directory "17-N": its module, when readable. 1 read, 0 not a
 * memory device entry, -1 unreadable (errno). */
static int dmi_entry(const char *sysroot, const char *name, gp_dmi_module *m)
{
    if (strncmp(name, "17-", 3) != 0)
        return 0;
    char path[GP_PATH_LEN];
    gp_snprintf(path, sizeof path, "/sys/firmware/dmi/entries/%.64s/raw", name);
    unsigned char *raw = calloc(1, 1024);
    if (!raw)
        return -1;
    int r = gp_read_file(sysroot, path, (char *)raw, 1024);
    if (r == 0)
        r = gp_parse_dmi_memory_device(raw, 1023, m) == 0 ? 1 : 0;
    int e = errno;
    free(raw);
    errno = e;
    return r;
}

static void dmi_sum(gp_dmi_memory *out, const gp_dmi_module *m)
{
    if (!m->present)
        return;
    out->modules++;
    if (m->width_bits <= 0 || m->mts <= 0) {
        out->unknown++;
        return;
    }
    out->gbps += gp_bw_dimm_gbps(m->width_bits, m->mts);
    if (out->mts_min == 0 || m->mts < out->mts_min)
        out->mts_min = m->mts;
    if (m->mts > out->mts_max)
        out->mts_max = m->mts;
    out->width_bits = m->width_bits;
}

static void dmi_why(gp_dmi_memory *out, int denied)
{
    if (denied && out->modules == 0)
        gp_strlcpy(out->why, "none: the DMI tables (/sys/firmware/dmi/entries/17-*/raw) "
                             "are readable by root only", sizeof out->why);
    else if (out->modules == 0)
        gp_strlcpy(out->why, "none: the DMI tables list no memory module", sizeof out->why);
    else if (out->unknown > 0)
        gp_snprintf(out->why, sizeof out->why,
                    "none: %d of the %d memory modules in the DMI tables state no speed "
                    "or width", out->unknown, out->modules);
    else
        gp_snprintf(out->why, sizeof out->why,
                    "DMI tables: %d modules x %d-bit at %lld%s MT/s, one module per "
                    "channel assumed", out->modules, out->width_bits,
                    (long long)out->mts_min, out->mts_max != out->mts_min ? " (the slowest)" : "");
    if (out->modules == 0 || out->unknown > 0)
        out->gbps = 0.0;
}

void gp_host_dmi_memory(const char *sysroot, gp_dmi_memory *out)
{
    memset(out, 0, sizeof *out);
    char *dir = gp_path_join(sysroot, "/sys/firmware/dmi/entries", NULL);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d) {
        gp_strlcpy(out->why, "none: this system has no DMI tables in sysfs "
                             "(/sys/firmware/dmi/entries)", sizeof out->why);
        return;
    }
    int denied = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        gp_dmi_module m;
        int r = dmi_entry(sysroot, e->d_name, &m);
        if (r < 0 && (errno == EACCES || errno == EPERM))
            denied = 1;
        if (r > 0)
            dmi_sum(out, &m);
    }
    closedir(d);
    dmi_why(out, denied);
}
