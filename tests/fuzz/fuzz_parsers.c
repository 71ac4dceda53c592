/*
 * fuzz_parsers.c - libFuzzer harness for the host-memory text parsers
 * (gp_parse_meminfo, gp_parse_proc_status, gp_parse_cgroup_value,
 * gp_parse_proc_cgroup) and, on
 * a fake sysroot tree written from the input, the whole host-memory path
 * (gp_host_memory_read and gpuprobe_device_memory on the CPU).
 *
 * Input: byte 0 selects the output-buffer sizes for gp_parse_proc_cgroup
 * (so truncation paths are reached); byte 1 selects extra round-trip
 * checks; the rest is split at the byte 0x01 into up to four texts:
 * meminfo, a cgroup value, /proc/self/cgroup, a second cgroup value.
 * Every text is given to the parsers as an exact-size heap copy, so ASan
 * sees any read past its NUL.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_check.h"

static char *dup_n(const uint8_t *d, size_t n)
{
    char *s = malloc(n + 1);
    CHECK(s != NULL);
    if (n)
        memcpy(s, d, n);
    s[n] = '\0';
    return s;
}

/* An exact-size output buffer: ASan reports any write past `size`. */
static void check_terminated(const char *buf, size_t size)
{
    CHECK(memchr(buf, '\0', size) != NULL);
}

static void parse_all(const char *meminfo, const char *value,
                      const char *cgroup, size_t v2_size, size_t v1_size)
{
    int r0;
    uint64_t total = 1, avail = 2, v = 3;
    (void)gp_parse_meminfo(meminfo, &total, &avail);
    /* /proc/self/status has the meminfo line format (VmSize, VmData). */
    uint64_t size = 4, data = 5;
    r0 = gp_parse_proc_status(meminfo, &size, &data);
    CHECK(r0 == 0 || r0 == -1);
    if (r0 != 0)
        CHECK(size == 4 && data == 5); /* nothing written on failure */
    int r = gp_parse_cgroup_value(value, &v);
    CHECK(r == 0 || r == -1);

    char *v2 = malloc(v2_size), *v1 = malloc(v1_size);
    CHECK(v2 && v1);
    memset(v2, 'x', v2_size);
    memset(v1, 'y', v1_size);
    r = gp_parse_proc_cgroup(cgroup, v2, v2_size, v1, v1_size);
    CHECK(r == 0 || r == -1);
    if (r == 0) {
        check_terminated(v2, v2_size);
        check_terminated(v1, v1_size);
    }
    free(v2);
    free(v1);
}

/* Round trips: well-formed texts built from the input must parse to the
 * values they were built from. */
static void round_trips(const uint8_t *d, size_t n)
{
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < 5 && i < n; i++)
        a = (a << 8) | d[i];
    for (size_t i = 5; i < 10 && i < n; i++)
        b = (b << 8) | d[i];
    a = a % (UINT64_C(1) << 40) + 1; /* kB: a * 1024 representable, > 0 */
    b %= UINT64_C(1) << 40;
    char text[512];
    snprintf(text, sizeof text,
             "MemTotal:       %" PRIu64 " kB\nMemFree:        12 kB\n"
             "MemAvailable:   %" PRIu64 " kB\nBuffers:        0 kB\n",
             a, b);
    uint64_t total = 0, avail = 0;
    CHECK(gp_parse_meminfo(text, &total, &avail) == 0);
    /* MemTotal 0 is refused, and available is capped at the total. */
    CHECK(total == a * 1024 && avail == (b < a ? b : a) * 1024);
    snprintf(text, sizeof text,
             "Name:\tx\nVmPeak:\t%" PRIu64 " kB\nVmData:\t%" PRIu64
             " kB\nVmSize:\t%" PRIu64 " kB\n", a, b, a);
    uint64_t size = 0, data = 0;
    CHECK(gp_parse_proc_status(text, &size, &data) == 0);
    CHECK(size == a * 1024 && data == b * 1024);

    uint64_t big = 0;
    for (size_t i = 0; i < 8 && i < n; i++)
        big = (big << 8) | d[i];
    if (big == UINT64_MAX)
        big--;
    snprintf(text, sizeof text, "%" PRIu64 "\n", big);
    uint64_t v = 0;
    CHECK(gp_parse_cgroup_value(text, &v) == 0 && v == big);
    CHECK(gp_parse_cgroup_value("max\n", &v) == 0 && v == UINT64_MAX);

    /* A path of safe characters from the input. */
    char path[200];
    size_t plen = 0;
    path[plen++] = '/';
    for (size_t i = 0; i < n && plen < 100; i++) {
        unsigned char c = d[i];
        path[plen++] = "abcdefghijklmnopqrstuvwxyz0123456789._-/"[c % 40];
    }
    path[plen] = '\0';
    snprintf(text, sizeof text, "12:cpu,cpuacct:/other\n7:memory:%s\n0::%s\n",
             path, path);
    char v2[GP_PATH_LEN], v1[GP_PATH_LEN];
    CHECK(gp_parse_proc_cgroup(text, v2, sizeof v2, v1, sizeof v1) == 0);
    CHECK(strcmp(v2, path) == 0);
    CHECK(strcmp(v1, path) == 0);
}

/* ---- the whole host-memory path on a fake sysroot ---- */

static char root[256];

static void write_file(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(text, f);
    CHECK(fclose(f) == 0);
}

static void mkdir_p(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            CHECK(mkdir(p, 0700) == 0 || errno == EEXIST);
            *s = '/';
        }
    }
    CHECK(mkdir(p, 0700) == 0 || errno == EEXIST);
}

static void remove_tree(void)
{
    if (root[0] == '\0')
        return;
    static const char *const files[] = {
        "proc/meminfo", "proc/self/cgroup",
        "sys/fs/cgroup/fz/memory.max", "sys/fs/cgroup/fz/memory.current",
        "sys/fs/cgroup/memory/fz/memory.limit_in_bytes",
        "sys/fs/cgroup/memory/fz/memory.usage_in_bytes",
        "sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory.current",
    };
    static const char *const dirs[] = {
        "sys/fs/cgroup/memory/fz", "sys/fs/cgroup/memory", "sys/fs/cgroup/fz",
        "sys/fs/cgroup", "sys/fs", "sys", "proc/self", "proc", "",
    };
    char p[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        unlink(p);
    }
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
        rmdir(p);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The tree is rewritten for many inputs: prefer a memory filesystem. */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0])
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(root, sizeof root, "%s/gpuprobe-fuzz-XXXXXX", tmp);
    CHECK(mkdtemp(root) != NULL);
    mkdir_p("proc/self");
    mkdir_p("sys/fs/cgroup/fz");
    mkdir_p("sys/fs/cgroup/memory/fz");
    atexit(remove_tree);
    return 0;
}

static const gp_fake_cuda no_cuda = {GPUPROBE_CUDA_NO_DRIVER, "fuzzing", 0,
                                     NULL};

static void host_path(const char *meminfo, const char *value,
                      const char *value2, int v1)
{
    write_file("proc/meminfo", meminfo);
    write_file("proc/self/cgroup", v1 ? "5:memory:/fz\n" : "0::/fz\n");
    if (v1) {
        write_file("sys/fs/cgroup/memory/fz/memory.limit_in_bytes", value);
        write_file("sys/fs/cgroup/memory/fz/memory.usage_in_bytes", value2);
    } else {
        write_file("sys/fs/cgroup/fz/memory.max", value);
        write_file("sys/fs/cgroup/fz/memory.current", value2);
    }

    gpuprobe_context *ctx = NULL;
    CHECK(gpuprobe_context_create(&ctx, 0) == GPUPROBE_OK);
    gp_test_set_sysroot(ctx, root);
    /* No CUDA device (simulated): keeps the real CUDA libraries from being
     * loaded for every input. */
    gp_test_set_cuda(ctx, &no_cuda);

    gp_host_memory hm;
    memset(&hm, 0, sizeof hm);
    gpuprobe_status st = gp_host_memory_read(ctx, root, &hm);
    CHECK(st == GPUPROBE_OK || st == GPUPROBE_ERR_SYSTEM);
    if (st != GPUPROBE_OK)
        CHECK(gpuprobe_last_error(ctx)[0] != '\0');

    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    st = gpuprobe_device_memory(ctx, 0, &mi, 0);
    CHECK(st == GPUPROBE_OK || st == GPUPROBE_ERR_SYSTEM);
    uint64_t ptotal = 0, pavail = 0;
    int sane = gp_parse_meminfo(meminfo, &ptotal, &pavail) == 0 &&
               pavail <= ptotal;
    if (st == GPUPROBE_OK) {
        /* Documented relations of the CPU's figures (available <= total
         * only asked of a meminfo that says so itself). */
        if (sane)
            CHECK(mi.available_bytes <= mi.total_bytes);
        CHECK(mi.total_bytes <= mi.physical_bytes);
        if (mi.cgroup_limit_bytes != UINT64_MAX)
            CHECK(mi.total_bytes <= mi.cgroup_limit_bytes);
        CHECK(mi.context_bytes == 0);
    } else {
        CHECK(gpuprobe_last_error(ctx)[0] != '\0');
    }

    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    st = gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16,
                                  GPUPROBE_WORKLOAD_WEIGHTS, 0, &cap);
    CHECK(st == GPUPROBE_OK || st == GPUPROBE_ERR_SYSTEM ||
          st == GPUPROBE_ERR_OVERFLOW);
    if (st == GPUPROBE_OK) {
        CHECK(cap.reserve_bytes == 0);
        CHECK(cap.usable_bytes <= cap.free_bytes);
        CHECK(cap.max_params <= GPUPROBE_MAX_PARAMS);
        CHECK(cap.max_params <= cap.usable_bytes / 2);
    }
    gpuprobe_context_destroy(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t v2_size = 1 + data[0] % 64, v1_size = 1 + (data[0] >> 6) * 7;
    int extra = data[1];
    data += 2;
    size -= 2;

    /* Split at 0x01 into up to four texts. */
    const uint8_t *part[4] = {data, data + size, data + size, data + size};
    size_t len[4] = {size, 0, 0, 0};
    int np = 1;
    for (size_t i = 0; i < size && np < 4; i++) {
        if (data[i] == 0x01) {
            len[np - 1] = (size_t)(data + i - part[np - 1]);
            part[np] = data + i + 1;
            len[np] = (size_t)(data + size - part[np]);
            np++;
        }
    }
    char *t[4];
    for (int i = 0; i < 4; i++)
        t[i] = dup_n(part[i], len[i]);

    parse_all(t[0], t[1], t[2], v2_size, v1_size);
    parse_all(t[2], t[0], t[1], GP_PATH_LEN, GP_PATH_LEN);
    if (extra & 1)
        round_trips(data, size);
    if (extra & 2)
        host_path(t[0], t[1], t[3], extra & 4);

    for (int i = 0; i < 4; i++)
        free(t[i]);
    return 0;
}
