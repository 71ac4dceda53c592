/*
 * host.c - the host, read from /proc and /sys: whole-file reads through
 * the sysroot test seam, the parsers of /proc/meminfo, /proc/self/cgroup,
 * /proc/self/status and cgroup files (fuzzed: they take arbitrary bytes,
 * never read past the NUL, never overflow), host memory with the cgroup
 * v1/v2 limits walked up the hierarchy, and this process's own limits
 * (RLIMIT_AS, RLIMIT_DATA). Second floor: calls only the helpers. See
 * docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cgroup v1 reports "no limit" as a huge page-aligned number
 * (9223372036854771712 on x86-64); anything from 2^62 up is no limit. */
#define GP_CGROUP_V1_UNLIMITED (UINT64_C(1) << 62)

/* ---- files ---------------------------------------------------------------- */

char *gp_path_join(const char *a, const char *b, const char *c)
{
    const char *part[3] = {a ? a : "", b ? b : "", c ? c : ""};
    size_t len[3], total = 0;
    for (int i = 0; i < 3; i++) {
        len[i] = strnlen(part[i], GP_PATH_LEN);
        total += len[i];
    }
    if (total >= GP_PATH_LEN) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    char *p = malloc(total + 1);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    size_t o = 0;
    for (int i = 0; i < 3; i++) {
        memcpy(p + o, part[i], len[i]);
        o += len[i];
    }
    p[o] = '\0';
    return p;
}

/* Open sysroot + path for reading; -1 with errno set. */
static int open_under(const char *sysroot, const char *path)
{
    char *full = gp_path_join(sysroot, path, NULL);
    if (!full)
        return -1;
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    int e = errno;
    free(full);
    errno = e;
    return fd;
}

/* read() into buf[0, size) until it is full or the file ends; the number of
 * bytes read, or -1 with errno set. */
static ssize_t read_full(int fd, char *buf, size_t size)
{
    size_t used = 0;
    while (used < size) {
        ssize_t n = read(fd, buf + used, size - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        used += (size_t)n;
    }
    return (ssize_t)used;
}

int gp_read_file(const char *sysroot, const char *path, char *buf, size_t size)
{
    if (!path || !buf || size == 0) {
        errno = EINVAL;
        return -1;
    }
    buf[0] = '\0';
    int fd = open_under(sysroot, path);
    if (fd < 0)
        return -1;
    /* One byte more than fits tells a file that does not fit. */
    char extra;
    ssize_t n = read_full(fd, buf, size - 1);
    ssize_t more = n == (ssize_t)(size - 1) ? read_full(fd, &extra, 1) : 0;
    int e = errno;
    close(fd);
    if (n < 0 || more != 0) {
        buf[0] = '\0';
        errno = n < 0 || more < 0 ? e : EFBIG;
        return -1;
    }
    buf[n] = '\0';
    return 0;
}

int gp_read_text(const char *sysroot, const char *path, size_t max, char **out)
{
    if (!path || !out) {
        errno = EINVAL;
        return -1;
    }
    *out = NULL;
    int fd = open_under(sysroot, path);
    if (fd < 0)
        return -1;
    /* /proc files report a size of 0: grow as the reads go. */
    size_t cap = 4096 < max ? 4096 : max, used = 0;
    char *buf = NULL;
    int e = 0;
    for (;;) {
        char *grown = realloc(buf, cap + 1);
        if (!grown) {
            e = ENOMEM;
            break;
        }
        buf = grown;
        ssize_t n = read_full(fd, buf + used, cap - used);
        if (n < 0) {
            e = errno;
            break;
        }
        used += (size_t)n;
        if (used < cap)
            break;                  /* the end of the file */
        if (cap == max) {           /* full at the bound: anything more? */
            char extra;
            ssize_t m = read_full(fd, &extra, 1);
            if (m != 0)
                e = m < 0 ? errno : EFBIG;
            break;
        }
        cap = cap <= max / 2 ? cap * 2 : max;
    }
    close(fd);
    if (e) {
        free(buf);
        errno = e;
        return -1;
    }
    buf[used] = '\0';
    *out = buf;
    return 0;
}

/* ---- parsers --------------------------------------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Decimal digits at *p into *out, advancing *p. -1 if none or > UINT64_MAX. */
static int parse_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int any = 0;
    while (*s >= '0' && *s <= '9') {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        s++;
        any = 1;
    }
    if (!any)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

int gp_parse_cgroup_value(const char *text, uint64_t *value)
{
    if (!text || !value)
        return -1;
    const char *p = text;
    while (is_space(*p))
        p++;
    uint64_t v;
    if (strncmp(p, "max", 3) == 0) {
        v = UINT64_MAX;
        p += 3;
    } else if (parse_u64(&p, &v) != 0) {
        return -1;
    }
    while (is_space(*p))
        p++;
    if (*p != '\0')
        return -1;
    *value = v;
    return 0;
}

/* One meminfo line "Key:   <n> kB" starting at line (ending at '\n' or NUL).
 * Returns 0 and the byte count if the line is `key`. */
static int meminfo_line(const char *line, const char *key, uint64_t *bytes)
{
    size_t kl = strlen(key);
    if (strncmp(line, key, kl) != 0 || line[kl] != ':')
        return -1;
    const char *p = line + kl + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t v;
    if (parse_u64(&p, &v) != 0)
        return -1;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t mult = 1;
    if (p[0] == 'k' && p[1] == 'B') {
        mult = 1024;
        p += 2;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    if (*p != '\n' && *p != '\0')
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *bytes = v * mult;
    return 0;
}

/* For each line of text, the first line of each keys[i] gives val[i] (and
 * have[i] = 1); malformed lines are skipped. */
static void scan_kb_lines(const char *text, const char *const *keys, int nkeys,
                          uint64_t *val, int *have)
{
    const char *line = text;
    while (*line) {
        for (int k = 0; k < nkeys; k++) {
            uint64_t b;
            if (!have[k] && meminfo_line(line, keys[k], &b) == 0) {
                val[k] = b;
                have[k] = 1;
                break;
            }
        }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
}

int gp_parse_meminfo(const char *text, uint64_t *total, uint64_t *available)
{
    if (!text || !total || !available)
        return -1;
    enum { TOTAL, AVAIL, FREE, BUFFERS, CACHED, NKEYS };
    static const char *const keys[NKEYS] = {"MemTotal", "MemAvailable", "MemFree",
                                            "Buffers", "Cached"};
    uint64_t val[NKEYS] = {0};
    int have[NKEYS] = {0};
    scan_kb_lines(text, keys, NKEYS, val, have);
    if (!have[TOTAL] || val[TOTAL] == 0)
        return -1;
    uint64_t avail;
    if (have[AVAIL]) {
        avail = val[AVAIL];
    } else if (have[FREE]) {
        /* Kernels before 3.14: estimate as free + buffers + page cache. */
        avail = val[FREE];
        if (UINT64_MAX - avail >= val[BUFFERS])
            avail += val[BUFFERS];
        if (UINT64_MAX - avail >= val[CACHED])
            avail += val[CACHED];
    } else {
        return -1;
    }
    if (avail > val[TOTAL])
        avail = val[TOTAL];
    *total = val[TOTAL];
    *available = avail;
    return 0;
}

int gp_parse_proc_status(const char *text, uint64_t *vm_size, uint64_t *vm_data)
{
    if (!text || !vm_size || !vm_data)
        return -1;
    static const char *const keys[2] = {"VmSize", "VmData"};
    uint64_t val[2] = {0};
    int have[2] = {0};
    scan_kb_lines(text, keys, 2, val, have);
    if (!have[0] || !have[1])
        return -1;
    *vm_size = val[0];
    *vm_data = val[1];
    return 0;
}

/* Copy a cgroup path if it is absolute, holds no NUL and fits. */
static int copy_cgroup_path(char *dst, size_t size, const char *src, size_t len)
{
    if (len == 0 || src[0] != '/' || len >= size || memchr(src, '\0', len))
        return -1;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 0;
}

/* Does the path have a ".." component? A cgroup namespace shows cgroups
 * outside it as "/../x": those are not below our mount, so not usable. */
static int climbs_out(const char *path)
{
    for (const char *p = strstr(path, ".."); p; p = strstr(p + 1, ".."))
        if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
            return 1;
    return 0;
}

/* Does the comma-separated controller list [s, s+len) name "memory"? */
static int lists_memory(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != ',')
            j++;
        if (j - i == 6 && memcmp(s + i, "memory", 6) == 0)
            return 1;
        i = j + 1;
    }
    return 0;
}

int gp_parse_proc_cgroup(const char *text, char *v2_path, size_t v2_size,
                         char *v1_mem_path, size_t v1_size)
{
    if (!text || !v2_path || !v1_mem_path || v2_size == 0 || v1_size == 0)
        return -1;
    v2_path[0] = '\0';
    v1_mem_path[0] = '\0';
    int found = 0;
    const char *line = text;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        /* hierarchy-ID ":" controller-list ":" path (the path may hold ':') */
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c1 && c2) {
            const char *path = c2 + 1;
            size_t plen = len - (size_t)(path - line);
            if (plen > 0 && path[plen - 1] == '\r')
                plen--;
            size_t idlen = (size_t)(c1 - line);
            size_t ctl_len = (size_t)(c2 - c1 - 1);
            if (idlen == 1 && line[0] == '0' && ctl_len == 0) {
                if (!v2_path[0] && copy_cgroup_path(v2_path, v2_size, path, plen) == 0)
                    found = 1;
            } else if (ctl_len > 0 && lists_memory(c1 + 1, ctl_len)) {
                if (!v1_mem_path[0] &&
                    copy_cgroup_path(v1_mem_path, v1_size, path, plen) == 0)
                    found = 1;
            }
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return found ? 0 : -1;
}

/* Value of "key <n>" in a memory.stat text; 0 if absent or malformed. */
static uint64_t stat_value(const char *text, const char *key)
{
    size_t kl = strlen(key);
    const char *line = text;
    while (*line) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
            const char *p = line + kl + 1;
            uint64_t v;
            if (parse_u64(&p, &v) == 0)
                return v;
        }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return 0;
}

/* ---- host memory --------------------------------------------------------------- */

/* A cgroup value file dir/name into *v: 0 read, -1 absent or malformed,
 * -2 out of memory. */
static int cg_value(const char *sysroot, const char *dir, const char *name,
                    uint64_t *v)
{
    char *path = gp_path_join(dir, "/", name);
    if (!path)
        return errno == ENOMEM ? -2 : -1;
    char buf[64];
    int r = gp_read_file(sysroot, path, buf, sizeof buf);
    int e = errno;
    free(path);
    if (r != 0)
        return e == ENOMEM ? -2 : -1;
    return gp_parse_cgroup_value(buf, v);
}

/* Reclaimable page cache (`key` in dir/memory.stat): 0 when unknown, or -2
 * (with *v untouched) out of memory. */
static int cg_inactive(const char *sysroot, const char *dir, const char *key,
                       uint64_t *v)
{
    *v = 0;
    char *path = gp_path_join(dir, "/memory.stat", NULL);
    if (!path)
        return errno == ENOMEM ? -2 : 0;
    char *stat = NULL;
    int r = gp_read_text(sysroot, path, GP_FILE_MAX, &stat);
    int e = errno;
    free(path);
    if (r != 0)
        return e == ENOMEM ? -2 : 0;
    *v = stat_value(stat, key);
    free(stat);
    return 0;
}

typedef struct cg_walk {
    uint64_t limit; /* tightest limit, UINT64_MAX if none */
    uint64_t room;  /* least room (limit - working set) in any limited level */
} cg_walk;

/* Visit `mount` + `path` and each ancestor up to `mount` itself. 0, or -1
 * when out of memory. */
static int cgroup_walk(const char *sysroot, const char *mount, const char *path,
                       const char *limit_file, const char *usage_file,
                       const char *stat_key, uint64_t unlimited_from, cg_walk *w)
{
    char *dir = gp_path_join(mount, path, NULL);
    if (!dir)
        return errno == ENOMEM ? -1 : 0; /* too long: nothing to walk */
    size_t mlen = strlen(mount);
    int rc = 0;
    for (;;) {
        /* strip a trailing '/' (except the mount itself) */
        size_t dl = strlen(dir);
        while (dl > mlen && dir[dl - 1] == '/')
            dir[--dl] = '\0';
        uint64_t limit, usage = 0, v;
        int r = cg_value(sysroot, dir, limit_file, &limit);
        if (r == 0 && limit < unlimited_from) {
            r = cg_value(sysroot, dir, usage_file, &v);
            if (r == 0 && v != UINT64_MAX)
                usage = v;
            /* Reclaimable page cache does not count against the room left
             * (as docker stats and the kubelet's working set do). */
            if (r != -2 && usage > 0 &&
                (r = cg_inactive(sysroot, dir, stat_key, &v)) == 0)
                usage = v < usage ? usage - v : 0;
            uint64_t room = usage < limit ? limit - usage : 0;
            if (limit < w->limit)
                w->limit = limit;
            if (room < w->room)
                w->room = room;
        }
        if (r == -2) {
            rc = -1;
            break;
        }
        if (dl <= mlen)
            break;
        char *slash = strrchr(dir + mlen, '/');
        if (!slash)
            break;
        if (slash == dir + mlen)
            dir[mlen] = '\0';
        else
            *slash = '\0';
    }
    free(dir);
    return rc;
}

/* The cgroup limits that apply to this process (v2, then v1). 0, or -1 when
 * out of memory. */
static int cgroup_limits(const char *sysroot, cg_walk *w)
{
    char *cg = NULL;
    if (gp_read_text(sysroot, "/proc/self/cgroup", GP_FILE_MAX, &cg) != 0 &&
        errno == ENOMEM)
        return -1;
    char *paths = malloc(2 * GP_PATH_LEN);
    if (!paths) {
        free(cg);
        return -1;
    }
    char *v2 = paths, *v1 = paths + GP_PATH_LEN;
    v2[0] = v1[0] = '\0';
    if (cg)
        (void)gp_parse_proc_cgroup(cg, v2, GP_PATH_LEN, v1, GP_PATH_LEN);
    free(cg);
    if (climbs_out(v2))
        v2[0] = '\0';
    if (climbs_out(v1))
        v1[0] = '\0';
    /* cgroup v2 (also the unified part of a hybrid setup, where it simply
     * has no memory.max). Without a visible path, the mount root is the
     * container's own cgroup (cgroup namespace). */
    int rc = cgroup_walk(sysroot, "/sys/fs/cgroup", v2, "memory.max",
                         "memory.current", "inactive_file", UINT64_MAX, w);
    /* cgroup v1 memory controller. The walk ends at the mount root, which is
     * what a container sees when its own path is not visible. */
    if (rc == 0)
        rc = cgroup_walk(sysroot, "/sys/fs/cgroup/memory", v1,
                         "memory.limit_in_bytes", "memory.usage_in_bytes",
                         "total_inactive_file", GP_CGROUP_V1_UNLIMITED, w);
    free(paths);
    return rc;
}

static uint64_t soft_limit(int resource)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur;
}

gpuprobe_status gp_host_memory_read(gpuprobe_context *ctx, const char *sysroot,
                                    gp_host_memory *out)
{
    char *text = NULL;
    if (gp_read_text(sysroot, "/proc/meminfo", GP_FILE_MAX, &text) != 0) {
        if (errno == ENOMEM)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "out of host memory reading /proc/meminfo");
        return gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "cannot read %s/proc/meminfo: %s",
                       sysroot ? sysroot : "", strerror(errno));
    }
    uint64_t total, avail;
    int bad = gp_parse_meminfo(text, &total, &avail) != 0;
    free(text);
    if (bad)
        return gp_fail(ctx, GPUPROBE_ERR_SYSTEM,
                       "cannot parse %s/proc/meminfo: no valid MemTotal/MemAvailable",
                       sysroot ? sysroot : "");

    cg_walk w = {UINT64_MAX, UINT64_MAX};
    if (cgroup_limits(sysroot, &w) != 0)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "out of host memory reading the cgroup memory limits");

    /* The process's own limits; what counts against them is read only when
     * one is set. Unknown usage counts as 0. */
    uint64_t as_limit = soft_limit(RLIMIT_AS), data_limit = soft_limit(RLIMIT_DATA);
    uint64_t vm_size = 0, vm_data = 0;
    if (as_limit != UINT64_MAX || data_limit != UINT64_MAX) {
        if (gp_read_text(sysroot, "/proc/self/status", GP_FILE_MAX, &text) == 0) {
            if (gp_parse_proc_status(text, &vm_size, &vm_data) != 0)
                vm_size = vm_data = 0;
            free(text);
        } else if (errno == ENOMEM) {
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "out of host memory reading /proc/self/status");
        }
    }

    out->mem_total = total;
    out->mem_available = avail;
    out->cgroup_limit = w.limit;
    /* Usage as charged against the limit, such that limit - usage is the
     * least room left in any limited ancestor. */
    out->cgroup_usage = 0;
    if (w.limit != UINT64_MAX)
        out->cgroup_usage = w.room < w.limit ? w.limit - w.room : 0;
    out->as_limit = as_limit;
    out->as_used = vm_size;
    out->data_limit = data_limit;
    out->data_used = vm_data;
    return GPUPROBE_OK;
}

/* Consider one limit: keep it in *r when it leaves less room. */
static void tighter(gp_room *r, const char *name, uint64_t limit, uint64_t used)
{
    uint64_t room = used < limit ? limit - used : 0;
    if (!r->name || room < r->bytes) {
        r->bytes = room;
        r->name = name;
        r->limit = limit;
        r->used = used;
    }
}

void gp_host_room(const gp_host_memory *h, int address_space, gp_room *r)
{
    r->bytes = UINT64_MAX;
    r->name = NULL;
    r->limit = r->used = 0;
    if (address_space) {
        if (h->as_limit != UINT64_MAX)
            tighter(r, "RLIMIT_AS", h->as_limit, h->as_used);
        if (h->data_limit != UINT64_MAX)
            tighter(r, "RLIMIT_DATA", h->data_limit, h->data_used);
        return;
    }
    tighter(r, "MemAvailable", h->mem_total, h->mem_total - h->mem_available);
    if (h->cgroup_limit != UINT64_MAX)
        tighter(r, "the cgroup memory limit", h->cgroup_limit, h->cgroup_usage);
}

#define MIB(x) ((double)(x) / 1048576.0)

gpuprobe_status gp_host_fits(gpuprobe_context *ctx, const gp_host_memory *h,
                             uint64_t memory, const char *memory_detail,
                             uint64_t address_space, const char *space_detail,
                             const char *what)
{
    gp_room m, a;
    gp_host_room(h, 0, &m);
    gp_host_room(h, 1, &a);
    uint64_t short_m = memory > m.bytes ? memory - m.bytes : 0;
    uint64_t short_a = address_space > a.bytes ? address_space - a.bytes : 0;
    if (short_m == 0 && short_a == 0)
        return GPUPROBE_OK;
    /* Name the limit that is short by most. */
    int as = short_a > short_m;
    const gp_room *r = as ? &a : &m;
    uint64_t need = as ? address_space : memory;
    unsigned long long room = r->bytes, limit = r->limit, used = r->used;
    char left[192];
    if (strcmp(r->name, "MemAvailable") == 0)
        gp_snprintf(left, sizeof left, "only %llu bytes (%.1f MiB) are "
                    "available (MemAvailable, of MemTotal %llu)",
                    room, MIB(room), limit);
    else
        gp_snprintf(left, sizeof left, "%s leaves %llu bytes (%.1f MiB) "
                    "(limit %llu, %s %llu)", r->name, room, MIB(room), limit,
                    strcmp(r->name, "RLIMIT_AS") == 0     ? "address space in use"
                    : strcmp(r->name, "RLIMIT_DATA") == 0 ? "data in use"
                                                          : "charged",
                    used);
    return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                   "%s needs %llu bytes (%.1f MiB) of %s (%s), but %s", what,
                   (unsigned long long)need, MIB(need),
                   as ? "address space" : "host memory",
                   as ? space_detail : memory_detail, left);
}

