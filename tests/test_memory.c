/*
 * test_memory.c - host memory (against /proc/meminfo and fake cgroup trees
 * through the sysroot seam), the parsers, the size-prefixed struct, and
 * simulated CUDA device memory.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "unit_check.h"
#ifdef GPUPROBE_HAVE_CUDA
#include "cuda_loader.h"
#endif
#include "sysroot_util.h"

#define KB UINT64_C(1024)
#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)


/* A sysroot with /proc/meminfo of 16 GiB total, 12 GiB available. */
static char *fake_root(void)
{
    static char root[64];
    strcpy(root, "/tmp/gpuprobe-mem-XXXXXX");
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo",
        "MemTotal:       16777216 kB\nMemFree:         1000000 kB\n"
        "MemAvailable:   12582912 kB\nBuffers:  1 kB\nCached:  2 kB\n");
    return root;
}

static gpuprobe_memory_info host_info(const char *root, gpuprobe_status *st)
{
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    *st = gpuprobe_device_memory(ctx, 0, &info, 0);
    gpuprobe_context_destroy(ctx);
    return info;
}

/* ---- against the real system ---- */

static void test_host_memory_real(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        skip();
    unsigned long long total_kb = 0, avail_kb = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "MemTotal: %llu kB", &total_kb);
        sscanf(line, "MemAvailable: %llu kB", &avail_kb);
    }
    fclose(f);
    assert_true(total_kb > 0);

    gpuprobe_context *ctx = new_ctx();
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    assert_int_equal(info.physical_bytes, total_kb * KB);
    assert_true(info.total_bytes > 0 && info.total_bytes <= info.physical_bytes);
    assert_true(info.available_bytes <= info.total_bytes);
    assert_int_equal(info.context_bytes, 0);
    if (info.cgroup_limit_bytes == UINT64_MAX) {
        /* no cgroup limit: MemAvailable within 10% (it moves) */
        double want = (double)avail_kb * 1024.0;
        assert_true((double)info.available_bytes > want * 0.9 &&
                    (double)info.available_bytes < want * 1.1);
        assert_int_equal(info.total_bytes, info.physical_bytes);
        assert_int_equal(info.flags & GPUPROBE_MEMORY_CGROUP_LIMITED, 0);
    } else {
        assert_true(info.total_bytes <= info.cgroup_limit_bytes);
    }
    print_message("host: total %llu, available %llu, physical %llu, cgroup limit %llu, flags %u\n",
                  (unsigned long long)info.total_bytes,
                  (unsigned long long)info.available_bytes,
                  (unsigned long long)info.physical_bytes,
                  (unsigned long long)info.cgroup_limit_bytes, info.flags);
    gpuprobe_context_destroy(ctx);
}

/* ---- fake trees ---- */

/* A memory.stat value too large for 64 bits is malformed: skipped, the
 * next line of the same key counts. */
static void test_cgroup_stat_overflow(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "0::/app.scope\n");
    sr_put(root, "sys/fs/cgroup/app.scope/memory.max", "4294967296\n");
    sr_put(root, "sys/fs/cgroup/app.scope/memory.current", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/app.scope/memory.stat",
        "anon 1000\ninactive_file 99999999999999999999\ninactive_file 268435456\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 4 * GIB);
    assert_int_equal(info.available_bytes, 4 * GIB - 768 * MIB);
    sr_rm_tree(root);
}

static void test_cgroup_v2_limit(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "0::/user.slice/app.scope\n");
    sr_put(root, "sys/fs/cgroup/user.slice/app.scope/memory.max", "4294967296\n");
    sr_put(root, "sys/fs/cgroup/user.slice/app.scope/memory.current", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/user.slice/app.scope/memory.stat",
        "anon 1000\nfile 536870912\ninactive_file 268435456\nactive_file 1\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.physical_bytes, 16 * GIB);
    assert_int_equal(info.cgroup_limit_bytes, 4 * GIB);
    assert_int_equal(info.total_bytes, 4 * GIB);
    /* room = limit - (current - inactive_file) = 4 GiB - 768 MiB */
    assert_int_equal(info.available_bytes, 4 * GIB - 768 * MIB);
    assert_true(info.flags & GPUPROBE_MEMORY_CGROUP_LIMITED);

    /* a tighter ancestor wins */
    sr_put(root, "sys/fs/cgroup/user.slice/memory.max", "2147483648\n");
    sr_put(root, "sys/fs/cgroup/user.slice/memory.current", "2000000000\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 2 * GIB);
    assert_int_equal(info.total_bytes, 2 * GIB);
    assert_int_equal(info.available_bytes, 2 * GIB - 2000000000);
    sr_rm_tree(root);
}

/* /proc/self/cgroup longer than 4 KiB (many hierarchies, long paths), the
 * memory controller's line last, and a memory.stat longer than 16 KiB
 * whose inactive_file comes last: both files are read whole. */
static void test_cgroup_long_files(void **state)
{
    (void)state;
    char *root = fake_root();
    char *text = malloc(8192);
    assert_non_null(text);
    size_t len = 0;
    char path[300];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    path[0] = '/';
    for (int id = 20; len < 5000; id--)
        len += (size_t)snprintf(text + len, 8192 - len, "%d:ctl%d:%s\n", id, id, path);
    snprintf(text + len, 8192 - len, "4:memory:/long.slice/app\n");
    assert_true(strlen(text) > 5000);
    sr_put(root, "proc/self/cgroup", text);
    sr_put(root, "sys/fs/cgroup/memory/long.slice/app/memory.limit_in_bytes",
           "3221225472\n"); /* 3 GiB */
    sr_put(root, "sys/fs/cgroup/memory/long.slice/app/memory.usage_in_bytes",
           "1073741824\n"); /* 1 GiB, half of it reclaimable */
    free(text);
    size_t stat_size = 24000, o = 0;
    char *stat = malloc(stat_size);
    assert_non_null(stat);
    for (int i = 0; o < 20000; i++)
        o += (size_t)snprintf(stat + o, stat_size - o, "hierarchical_stat_%05d %d\n", i, i);
    snprintf(stat + o, stat_size - o, "total_inactive_file 536870912\n");
    sr_put(root, "sys/fs/cgroup/memory/long.slice/app/memory.stat", stat);
    free(stat);

    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 3 * GIB);
    assert_int_equal(info.total_bytes, 3 * GIB);
    assert_int_equal(info.available_bytes, 3 * GIB - 512 * MIB);
    assert_true(info.flags & GPUPROBE_MEMORY_CGROUP_LIMITED);

    /* The same for cgroup v2: the "0::" line after 5 KiB of others. */
    text = malloc(8192);
    assert_non_null(text);
    len = 0;
    for (int id = 20; len < 5000; id--)
        len += (size_t)snprintf(text + len, 8192 - len, "%d:ctl%d:%s\n", id, id, path);
    snprintf(text + len, 8192 - len, "0::/v2.slice\n");
    sr_put(root, "proc/self/cgroup", text);
    free(text);
    sr_put(root, "sys/fs/cgroup/v2.slice/memory.max", "2147483648\n");
    sr_put(root, "sys/fs/cgroup/v2.slice/memory.current", "0\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 2 * GIB);
    assert_int_equal(info.available_bytes, 2 * GIB);
    sr_rm_tree(root);
}

/* A cgroup whose directory path fits in the 4096 bytes of a path the
 * library builds but whose files' paths do not: they are not read (nothing
 * is taken for a limit), and the
 * parents, whose paths are shorter, are read as usual. */
static void test_cgroup_path_too_long(void **state)
{
    (void)state;
    char *root = fake_root();
    size_t n = 4075; /* "/sys/fs/cgroup/" and it: 4090 bytes, "/memory.max" too many */
    char *text = malloc(n + 16);
    assert_non_null(text);
    memcpy(text, "0::/", 4);
    memset(text + 4, 'q', n);
    memcpy(text + 4 + n, "\n", 2);
    sr_put(root, "proc/self/cgroup", text);
    free(text);
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_MAX);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB);
    assert_int_equal(info.flags, 0);
    sr_rm_tree(root);
}

static void test_cgroup_v2_max(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "0::/a\n");
    sr_put(root, "sys/fs/cgroup/a/memory.max", "max\n");
    sr_put(root, "sys/fs/cgroup/a/memory.current", "123\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_MAX);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB);
    assert_int_equal(info.flags, 0);
    sr_rm_tree(root);
}

static void test_cgroup_v2_limit_above_ram(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "0::/a\n");
    sr_put(root, "sys/fs/cgroup/a/memory.max", "68719476736\n"); /* 64 GiB */
    sr_put(root, "sys/fs/cgroup/a/memory.current", "0\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 64 * GIB);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB);
    assert_int_equal(info.flags & GPUPROBE_MEMORY_CGROUP_LIMITED, 0);
    sr_rm_tree(root);
}

/* A limit above the RAM whose room is below MemAvailable cuts only the
 * available figure, and the flag says so; room equal to MemAvailable or a
 * limit equal to the RAM cuts nothing. */
static void test_cgroup_cuts_available_only(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "0::/a\n");
    sr_put(root, "sys/fs/cgroup/a/memory.max", "34359738368\n");     /* 32 GiB */
    sr_put(root, "sys/fs/cgroup/a/memory.current", "32212254720\n"); /* 30 GiB */
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 32 * GIB);
    assert_int_equal(info.physical_bytes, 16 * GIB);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 2 * GIB);
    assert_int_equal(info.flags, GPUPROBE_MEMORY_CGROUP_LIMITED);

    /* room 12 GiB = MemAvailable: nothing cut, no flag */
    sr_put(root, "sys/fs/cgroup/a/memory.current", "21474836480\n"); /* 20 GiB */
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB);
    assert_int_equal(info.flags, 0);

    /* a limit of exactly the RAM, nothing used: no flag */
    sr_put(root, "sys/fs/cgroup/a/memory.max", "17179869184\n");     /* 16 GiB */
    sr_put(root, "sys/fs/cgroup/a/memory.current", "0\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 16 * GIB);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB);
    assert_int_equal(info.flags, 0);
    sr_rm_tree(root);
}

/* A limit below the RAM whose room is still above MemAvailable cuts only
 * the total: the available figure stays MemAvailable, and the flag says
 * the cgroup limited the figures. */
static void test_cgroup_cuts_total_only(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "0::/a\n");
    sr_put(root, "sys/fs/cgroup/a/memory.max", "15032385536\n");    /* 14 GiB */
    sr_put(root, "sys/fs/cgroup/a/memory.current", "1073741824\n"); /* 1 GiB */
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 14 * GIB);
    assert_int_equal(info.physical_bytes, 16 * GIB);
    assert_int_equal(info.total_bytes, 14 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB); /* room 13 GiB cuts nothing */
    assert_int_equal(info.flags, GPUPROBE_MEMORY_CGROUP_LIMITED);
    sr_rm_tree(root);
}

static void test_cgroup_v1_limit(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup",
        "12:pids:/\n4:memory:/process_api/abc\n3:cpu,cpuacct:/\n0::/\n");
    sr_put(root, "sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes", "536870912\n");
    sr_put(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    sr_put(root, "sys/fs/cgroup/memory/memory.usage_in_bytes", "999999999999\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, GIB);
    assert_int_equal(info.total_bytes, GIB);
    assert_int_equal(info.available_bytes, GIB / 2);
    assert_true(info.flags & GPUPROBE_MEMORY_CGROUP_LIMITED);

    /* v1 writes "no limit" as a huge number: from 2^62 up it is none */
    sr_put(root, "proc/self/cgroup", "4:memory:/big\n");
    sr_put(root, "sys/fs/cgroup/memory/big/memory.usage_in_bytes", "0\n");
    sr_put(root, "sys/fs/cgroup/memory/big/memory.limit_in_bytes", "4611686018427383808\n");
    info = host_info(root, &st); /* 2^62 - 4096: a limit, far above the RAM */
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_C(4611686018427383808));
    assert_int_equal(info.total_bytes, 16 * GIB);
    sr_put(root, "sys/fs/cgroup/memory/big/memory.limit_in_bytes", "4611686018427387904\n");
    info = host_info(root, &st); /* 2^62: none */
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_MAX);
    sr_rm_tree(root);
}

static void test_cgroup_v1_unlimited_and_mount_root(void **state)
{
    (void)state;
    char *root = fake_root();
    /* The path is not visible (container): the mount root is used. */
    sr_put(root, "proc/self/cgroup", "4:memory:/docker/0123456789\n");
    sr_put(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    sr_put(root, "sys/fs/cgroup/memory/memory.usage_in_bytes", "315576320\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_MAX);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.flags, 0);

    sr_put(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "2147483648\n");
    sr_put(root, "sys/fs/cgroup/memory/memory.stat",
        "cache 100\ntotal_inactive_file 15576320\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, 2 * GIB);
    assert_int_equal(info.total_bytes, 2 * GIB);
    assert_int_equal(info.available_bytes, 2 * GIB - 300000000);
    sr_rm_tree(root);
}

static void test_cgroup_namespace_path(void **state)
{
    (void)state;
    char *root = fake_root();
    /* Outside our cgroup namespace: the mount root is our own cgroup. */
    sr_put(root, "proc/self/cgroup", "0::/../../system.slice/x\n");
    sr_put(root, "sys/fs/cgroup/memory.max", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/memory.current", "0\n");
    sr_put(root, "sys/system.slice/x/memory.max", "1024\n"); /* must not be read */
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, GIB);
    assert_int_equal(info.total_bytes, GIB);
    sr_rm_tree(root);
}

/* Only a ".." path component climbs out of the cgroup namespace; "..x"
 * is a name like any other. A climbing path is not walked at all. */
static void test_cgroup_dotdot(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "sys/fs/cgroup/memory.max", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/memory.current", "0\n");
    sr_put(root, "sys/fs/cgroup/..x/memory.max", "536870912\n");
    sr_put(root, "sys/fs/cgroup/..x/memory.current", "0\n");
    sr_put(root, "sys/fs/cgroup/a/memory.max", "1024\n"); /* must not be read */
    sr_put(root, "proc/self/cgroup", "0::/..x\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, GIB / 2);
    sr_put(root, "proc/self/cgroup", "0::/a/..\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, GIB);
    sr_put(root, "proc/self/cgroup", "0::/a/../..x\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, GIB);
    sr_rm_tree(root);
}

static void test_cgroup_garbage(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "this is not a cgroup file\n::::\n0::relative\n");
    sr_put(root, "sys/fs/cgroup/memory.max", "lots\n");
    sr_put(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "-1\n");
    gpuprobe_status st;
    gpuprobe_memory_info info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_MAX);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 12 * GIB);

    /* a usage of "max" is no usage figure: the room is the whole limit */
    sr_put(root, "proc/self/cgroup", "0::/y\n");
    sr_put(root, "sys/fs/cgroup/y/memory.max", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/y/memory.current", "max\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.available_bytes, GIB);

    /* usage above the limit: no room, never a wrap-around */
    sr_put(root, "proc/self/cgroup", "0::/x\n");
    sr_put(root, "sys/fs/cgroup/x/memory.max", "1000\n");
    sr_put(root, "sys/fs/cgroup/x/memory.current", "5000\n");
    info = host_info(root, &st);
    assert_int_equal(st, GPUPROBE_OK);
    assert_int_equal(info.total_bytes, 1000);
    assert_int_equal(info.available_bytes, 0);
    sr_rm_tree(root);
}

static void test_meminfo_missing_or_garbage(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mem-XXXXXX";
    assert_non_null(mkdtemp(root));
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_sysroot(ctx, root);
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    /* no /proc/meminfo at all: a system error naming the file */
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_ERR_SYSTEM);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "meminfo"));
    sr_put(root, "proc/meminfo", "\x01\x02garbage\nMemTotal: lots kB\n");
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_ERR_SYSTEM);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "meminfo"));
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* ---- parsers ---- */

static void test_parse_meminfo(void **state)
{
    (void)state;
    uint64_t t = 1, a = 1;
    assert_int_equal(gp_parse_meminfo("MemTotal: 100 kB\nMemAvailable: 40 kB\n", &t, &a), 0);
    assert_int_equal(t, 100 * KB);
    assert_int_equal(a, 40 * KB);
    /* no place for either figure: refused, the other untouched */
    assert_int_equal(gp_parse_meminfo("MemTotal: 100 kB\nMemAvailable: 40 kB\n", NULL, &a), -1);
    assert_int_equal(gp_parse_meminfo("MemTotal: 100 kB\nMemAvailable: 40 kB\n", &t, NULL), -1);
    assert_int_equal(t, 100 * KB);
    assert_int_equal(a, 40 * KB);
    /* order does not matter; other lines ignored; no trailing newline */
    assert_int_equal(gp_parse_meminfo("Foo: 1 kB\nMemAvailable:\t7 kB\nMemTotal:\t9 kB", &t, &a), 0);
    assert_int_equal(t, 9 * KB);
    assert_int_equal(a, 7 * KB);
    /* old kernels: MemFree + Buffers + Cached */
    assert_int_equal(gp_parse_meminfo("MemTotal: 100 kB\nMemFree: 10 kB\nBuffers: 5 kB\n"
                                      "Cached: 20 kB\nSwapCached: 99 kB\n", &t, &a), 0);
    assert_int_equal(a, 35 * KB);
    /* available is capped at total */
    assert_int_equal(gp_parse_meminfo("MemTotal: 10 kB\nMemAvailable: 20 kB\n", &t, &a), 0);
    assert_int_equal(a, 10 * KB);
    /* a unit-less value is bytes */
    assert_int_equal(gp_parse_meminfo("MemTotal: 4096\nMemAvailable: 1024\n", &t, &a), 0);
    assert_int_equal(t, 4096);

    static const char *const bad[] = {
        "",
        "\n\n\n",
        "MemAvailable: 10 kB\n",                          /* no total */
        "MemTotal: 0 kB\nMemAvailable: 0 kB\n",           /* zero total */
        "MemTotal: 100 kB\n",                             /* no free figure at all */
        "MemTotal: -5 kB\nMemAvailable: 1 kB\n",
        "MemTotal: 10 MB\nMemAvailable: 1 kB\n",          /* unknown unit */
        "MemTotal: 18446744073709551616\nMemAvailable: 1\n",   /* > UINT64_MAX */
        "MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n", /* * 1024 overflows */
        "MemTotalX: 10 kB\nMemAvailable: 1 kB\n",
        "memtotal: 10 kB\nMemAvailable: 1 kB\n",
        "MemTotal 10 kB\nMemAvailable: 1 kB\n",
        "MemTotal:\nMemAvailable: 1 kB\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = 77;
        if (gp_parse_meminfo(bad[i], &t, &a) != -1)
            fail_msg("accepted bad meminfo #%zu", i);
        assert_int_equal(t, 77);
    }
    assert_int_equal(gp_parse_meminfo(NULL, &t, &a), -1);
    /* blanks and a carriage return after the unit */
    assert_int_equal(gp_parse_meminfo("MemTotal: 100 kB \r\nMemAvailable: 40 kB\t\n",
                                      &t, &a), 0);
    assert_int_equal(t, 100 * KB);
    assert_int_equal(a, 40 * KB);
    /* the largest representable value */
    assert_int_equal(gp_parse_meminfo("MemTotal: 18446744073709551615\nMemAvailable: 1\n",
                                      &t, &a), 0);
    assert_int_equal(t, UINT64_MAX);
}

static void test_parse_cgroup_value(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;
        uint64_t v;
    } t[] = {
        {"0", 0, 0},
        {"123\n", 0, 123},
        {"  42  \n", 0, 42},
        {"\t42\r\n", 0, 42},
        {"\v42\f", 0, 42},
        {"max", 0, UINT64_MAX},
        {"max\n", 0, UINT64_MAX},
        {"9223372036854771712\n", 0, UINT64_C(9223372036854771712)},
        {"18446744073709551615", 0, UINT64_MAX},
        {"18446744073709551616", -1, 0},
        {"99999999999999999999999", -1, 0},
        {"", -1, 0},
        {"\n", -1, 0},
        {"-1", -1, 0},
        {"+1", -1, 0},
        {"12 34", -1, 0},
        {"12abc", -1, 0},
        {"maxx", -1, 0},
        {"mab", -1, 0}, /* "max" whole, not its first letters */
        {"MAX", -1, 0},
        {"0x10", -1, 0},
        {"1.5", -1, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint64_t v = 5;
        int rc = gp_parse_cgroup_value(t[i].text, &v);
        if (rc != t[i].rc)
            fail_msg("\"%s\": rc %d, want %d", t[i].text, rc, t[i].rc);
        if (rc == 0 && v != t[i].v)
            fail_msg("\"%s\": value %llu", t[i].text, (unsigned long long)v);
        if (rc != 0)
            assert_int_equal(v, 5);
    }
    uint64_t v;
    assert_int_equal(gp_parse_cgroup_value(NULL, &v), -1);
}

static void test_parse_proc_cgroup(void **state)
{
    (void)state;
    char v2[64], v1[64];
    assert_int_equal(gp_parse_proc_cgroup("0::/user.slice/x.scope\n", v2, sizeof v2, v1,
                                          sizeof v1), 0);
    assert_string_equal(v2, "/user.slice/x.scope");
    assert_string_equal(v1, "");

    assert_int_equal(gp_parse_proc_cgroup("9:name=systemd:/\n8:pids:/\n"
                                          "4:memory:/process_api/793bf\n0::/\n",
                                          v2, sizeof v2, v1, sizeof v1), 0);
    assert_string_equal(v2, "/");
    assert_string_equal(v1, "/process_api/793bf");

    /* memory in a joint controller list; a path with a colon */
    assert_int_equal(gp_parse_proc_cgroup("3:cpu,memory,blkio:/a:b\n", v2, sizeof v2, v1,
                                          sizeof v1), 0);
    assert_string_equal(v1, "/a:b");
    assert_string_equal(v2, "");
    /* "memoryx" is not memory */
    assert_int_equal(gp_parse_proc_cgroup("3:memoryx:/a\n", v2, sizeof v2, v1, sizeof v1), -1);

    /* paths that do not fit or are relative are refused */
    char tiny[8];
    assert_int_equal(gp_parse_proc_cgroup("0::/a/very/long/path\n", tiny, sizeof tiny, v1,
                                          sizeof v1), -1);
    assert_string_equal(tiny, "");
    /* at the bound: 7 bytes and the NUL fit in 8, 8 bytes do not */
    assert_int_equal(gp_parse_proc_cgroup("0::/abcdef\n", tiny, sizeof tiny, v1, sizeof v1), 0);
    assert_string_equal(tiny, "/abcdef");
    assert_int_equal(gp_parse_proc_cgroup("0::/abcdefg\n", tiny, sizeof tiny, v1, sizeof v1),
                     -1);
    assert_string_equal(tiny, "");
    assert_int_equal(gp_parse_proc_cgroup("0::relative\n", v2, sizeof v2, v1, sizeof v1), -1);
    /* paths outside a cgroup namespace are parsed as they are (the reader
     * then falls back to the mount root) */
    assert_int_equal(gp_parse_proc_cgroup("0::/../../x\n", v2, sizeof v2, v1, sizeof v1), 0);
    assert_string_equal(v2, "/../../x");
    assert_int_equal(gp_parse_proc_cgroup("0::/a/..b\r\n", v2, sizeof v2, v1, sizeof v1), 0);
    assert_string_equal(v2, "/a/..b");

    static const char *const bad[] = {"", "\n", "garbage", ":", "::", "0:", "1::/x",
                                      "0:memory", "00::/x", "x::/y"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (gp_parse_proc_cgroup(bad[i], v2, sizeof v2, v1, sizeof v1) != -1)
            fail_msg("accepted \"%s\"", bad[i]);
        assert_string_equal(v2, "");
        assert_string_equal(v1, "");
    }
}

static void test_parsers_random_input(void **state)
{
    (void)state;
    /* A light in-tree fuzz: random bytes from a small alphabet that hits
     * the grammar; must not crash or read out of bounds (ASan build). */
    static const char alpha[] = "0123456789:kB \n\tMemTotalAvailbe/max.,-";
    unsigned seed = 12345;
    char buf[257];
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = (size_t)(iter % 256);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = alpha[(seed >> 16) % (sizeof alpha - 1)];
        }
        buf[len] = '\0';
        uint64_t a, b;
        char v2[16], v1[16];
        (void)gp_parse_meminfo(buf, &a, &b);
        (void)gp_parse_cgroup_value(buf, &a);
        (void)gp_parse_proc_cgroup(buf, v2, sizeof v2, v1, sizeof v1);
        assert_true(strlen(v2) < sizeof v2 && strlen(v1) < sizeof v1);
    }
}

/* Bad arguments are refused (EINVAL) before anything is opened or written;
 * a read that fails after the open keeps its own errno (a directory:
 * EISDIR), only a file that does not fit is EFBIG. */
static void test_read_file_errors(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mem-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "f", "hello");
    sr_mkdirs(root); /* root itself is a directory */
    char buf[16] = "untouched";
    errno = 0;
    assert_int_equal(gp_read_file(root, NULL, buf, sizeof buf), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(buf, "untouched");
    errno = 0;
    assert_int_equal(gp_read_file(root, "/f", NULL, sizeof buf), -1);
    assert_int_equal(errno, EINVAL);
    char *text = (char *)buf;
    errno = 0;
    assert_int_equal(gp_read_text(root, NULL, 64, &text), -1);
    assert_int_equal(errno, EINVAL);
    assert_ptr_equal(text, buf); /* not even cleared: nothing was asked */
    errno = 0;
    assert_int_equal(gp_read_text(root, "/f", 64, NULL), -1);
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_int_equal(gp_read_file(root, "/f", buf, 0), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(buf, "untouched");
    errno = 0;
    assert_int_equal(gp_read_file(root, "/", buf, sizeof buf), -1);
    assert_int_equal(errno, EISDIR);
    assert_string_equal(buf, "");
    char one[1] = {'x'};
    errno = 0;
    assert_int_equal(gp_read_file(root, "/", one, sizeof one), -1);
    assert_int_equal(errno, EISDIR);
    errno = 0;
    assert_int_equal(gp_read_file(root, "/f", one, sizeof one), -1);
    assert_int_equal(errno, EFBIG);
    sr_rm_tree(root);
}

/* Parsers given nothing to parse: no number, or no place to put one. */
static void test_parse_empty_input(void **state)
{
    (void)state;
    uint64_t v = 5;
    assert_int_equal(gp_parse_cgroup_value("", &v), -1);
    assert_int_equal(gp_parse_cgroup_value(" \n", &v), -1);
    assert_int_equal(v, 5);
    /* Lines of other keys before MemTotal are not MemTotal. */
    uint64_t total = 0, avail = 0;
    assert_int_equal(gp_parse_meminfo("MemFree: 3 kB\nMemAvailable: 5 kB\nBuffers: 7 kB\n"
                                      "MemTotal: 10 kB\n", &total, &avail), 0);
    assert_int_equal(total, 10 * 1024);
    assert_int_equal(avail, 5 * 1024);
    uint64_t size = 0, data = 0;
    assert_int_equal(gp_parse_proc_status("Name: x\nVmData: 2 kB\nVmSize: 9 kB\n", &size,
                                          &data), 0);
    assert_int_equal(size, 9 * 1024);
    assert_int_equal(data, 2 * 1024);
    /* No text or no place for a figure: -1, the figures untouched. */
    assert_int_equal(gp_parse_proc_status(NULL, &size, &data), -1);
    assert_int_equal(gp_parse_proc_status("VmSize: 1 kB\nVmData: 1 kB\n", NULL, &data), -1);
    assert_int_equal(gp_parse_proc_status("VmSize: 1 kB\nVmData: 1 kB\n", &size, NULL), -1);
    assert_int_equal(size, 9 * 1024);
    assert_int_equal(data, 2 * 1024);
    /* Either figure missing: -1, neither written. */
    assert_int_equal(gp_parse_proc_status("VmSize: 1 kB\n", &size, &data), -1);
    assert_int_equal(gp_parse_proc_status("Name: x\nVmData: 1 kB\n", &size, &data), -1);
    assert_int_equal(size, 9 * 1024);
    assert_int_equal(data, 2 * 1024);

    char v2[64] = "keep2", v1[64] = "keep1";
    const char *text = "4:memory:/m\n";
    assert_int_equal(gp_parse_proc_cgroup(NULL, v2, sizeof v2, v1, sizeof v1), -1);
    assert_int_equal(gp_parse_proc_cgroup(text, NULL, sizeof v2, v1, sizeof v1), -1);
    assert_int_equal(gp_parse_proc_cgroup(text, v2, sizeof v2, NULL, sizeof v1), -1);
    assert_int_equal(gp_parse_proc_cgroup(text, v2, 0, v1, sizeof v1), -1);
    assert_int_equal(gp_parse_proc_cgroup(text, v2, sizeof v2, v1, 0), -1);
    assert_string_equal(v2, "keep2");
    assert_string_equal(v1, "keep1");
    /* Only a v1 memory line: found. */
    assert_int_equal(gp_parse_proc_cgroup(text, v2, sizeof v2, v1, sizeof v1), 0);
    assert_string_equal(v2, "");
    assert_string_equal(v1, "/m");
}

/* The refusal names the limit that is short, what it allows and what is
 * in use against it. */
static void test_fits_names_limit(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gp_host_memory h = {16 * GIB, 8 * GIB, UINT64_MAX, 0, UINT64_MAX, 0, 0, 0};
    h.data_limit = 1000 * MIB;
    h.data_used = 900 * MIB;
    assert_int_equal(gp_host_fits(ctx, &h, 0, "", 200 * MIB, "the buffers", "a run"),
                     GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "a run needs 209715200 bytes (200.0 MiB) of address space (the "
                        "buffers), but RLIMIT_DATA leaves 104857600 bytes (100.0 MiB) "
                        "(limit 1048576000, data in use 943718400)");
    h.as_limit = 2000 * MIB;
    h.as_used = 1950 * MIB;
    assert_int_equal(gp_host_fits(ctx, &h, 0, "", 200 * MIB, "the buffers", "a run"),
                     GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_string_equal(gpuprobe_last_error(ctx),
                        "a run needs 209715200 bytes (200.0 MiB) of address space (the "
                        "buffers), but RLIMIT_AS leaves 52428800 bytes (50.0 MiB) "
                        "(limit 2097152000, address space in use 2044723200)");
    h.data_used = h.as_used = 0;
    assert_int_equal(gp_host_fits(ctx, &h, 0, "", 200 * MIB, "the buffers", "a run"),
                     GPUPROBE_OK);
    /* short of memory and of address space by the same 100 MiB: the
     * memory is named */
    gp_host_memory t = {16 * GIB, 8 * GIB, UINT64_MAX, 0, 2000 * MIB, 0, UINT64_MAX, 0};
    assert_int_equal(gp_host_fits(ctx, &t, 8 * GIB + 100 * MIB, "the data", 2100 * MIB,
                                  "the buffers", "a run"),
                     GPUPROBE_ERR_OUT_OF_MEMORY);
    if (!strstr(gpuprobe_last_error(ctx), "are available (MemAvailable"))
        fail_msg("\"%s\" does not name MemAvailable", gpuprobe_last_error(ctx));
    gpuprobe_context_destroy(ctx);
}

/* A process limit set (RLIMIT_AS and RLIMIT_DATA just below "infinite",
 * so that nothing else is limited) and no /proc/self/status to read: the
 * host reading still succeeds, with the limits as set and the address
 * space and data in use counted as 0 (unknown usage counts as nothing). */
static void test_limits_without_proc_status(void **state)
{
    (void)state;
    struct rlimit as_old, data_old;
    assert_int_equal(getrlimit(RLIMIT_AS, &as_old), 0);
    assert_int_equal(getrlimit(RLIMIT_DATA, &data_old), 0);
    if (as_old.rlim_max != RLIM_INFINITY || data_old.rlim_max != RLIM_INFINITY) {
        print_message("the hard limits are set: the case needs them infinite\n");
        skip();
    }
    char root[] = "/tmp/gpuprobe-mem-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
    struct rlimit as_new = as_old, data_new = data_old;
    as_new.rlim_cur = RLIM_INFINITY - 1;
    data_new.rlim_cur = RLIM_INFINITY - 2;
    assert_int_equal(setrlimit(RLIMIT_AS, &as_new), 0);
    assert_int_equal(setrlimit(RLIMIT_DATA, &data_new), 0);
    gpuprobe_context *ctx = new_ctx();
    gp_host_memory h;
    memset(&h, 0x5a, sizeof h);
    gpuprobe_status st = gp_host_memory_read(ctx, root, &h);
    assert_int_equal(setrlimit(RLIMIT_AS, &as_old), 0);
    assert_int_equal(setrlimit(RLIMIT_DATA, &data_old), 0);
    if (st != GPUPROBE_OK)
        fail_msg("gp_host_memory_read: %s", gpuprobe_last_error(ctx));
    assert_int_equal(h.mem_total, 2048 * KB);
    assert_int_equal(h.mem_available, 1024 * KB);
    assert_int_equal(h.as_limit, (uint64_t)(RLIM_INFINITY - 1));
    assert_int_equal(h.data_limit, (uint64_t)(RLIM_INFINITY - 2));
    assert_int_equal(h.as_used, 0);
    assert_int_equal(h.data_used, 0);
    gpuprobe_context_destroy(ctx);
    sr_rm_tree(root);
}

/* The room under the tightest limit of each kind: none, one, the tighter
 * of two (a tie keeps the first), a limit already exceeded (no room). */
static void test_host_room(void **state)
{
    (void)state;
    gp_host_memory h = {1000, 600, UINT64_MAX, 0, UINT64_MAX, 0, UINT64_MAX, 0};
    gp_room r;
    memset(&r, 0x5a, sizeof r);
    gp_host_room(&h, 1, &r);
    assert_int_equal(r.bytes, UINT64_MAX);
    assert_null(r.name);
    assert_int_equal(r.limit, 0);
    assert_int_equal(r.used, 0);
    memset(&r, 0x5a, sizeof r);
    gp_host_room(&h, 0, &r);
    assert_int_equal(r.bytes, 600);
    assert_string_equal(r.name, "MemAvailable");
    assert_int_equal(r.limit, 1000);
    assert_int_equal(r.used, 400);
    h.cgroup_limit = 900;
    h.cgroup_usage = 300; /* 600 left: a tie, MemAvailable kept */
    gp_host_room(&h, 0, &r);
    assert_string_equal(r.name, "MemAvailable");
    h.cgroup_usage = 301;
    gp_host_room(&h, 0, &r);
    assert_int_equal(r.bytes, 599);
    assert_string_equal(r.name, "the cgroup memory limit");
    assert_int_equal(r.limit, 900);
    assert_int_equal(r.used, 301);
    h.as_limit = 5000;
    h.as_used = 4000;
    h.data_limit = 3000;
    h.data_used = 3500; /* over its limit: no room */
    gp_host_room(&h, 1, &r);
    assert_int_equal(r.bytes, 0);
    assert_string_equal(r.name, "RLIMIT_DATA");
    assert_int_equal(r.limit, 3000);
    assert_int_equal(r.used, 3500);
    h.data_limit = UINT64_MAX;
    gp_host_room(&h, 1, &r);
    assert_int_equal(r.bytes, 1000);
    assert_string_equal(r.name, "RLIMIT_AS");
}

static void test_read_file(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuprobe-mem-XXXXXX";
    assert_non_null(mkdtemp(root));
    sr_put(root, "f", "hello world");
    char buf[6];
    errno = 0;
    /* Never cut silently: a file that does not fit is an error. */
    assert_int_equal(gp_read_file(root, "/f", buf, sizeof buf), -1);
    assert_int_equal(errno, EFBIG);
    assert_string_equal(buf, "");
    char fit[12];
    assert_int_equal(gp_read_file(root, "/f", fit, sizeof fit), 0);
    assert_string_equal(fit, "hello world"); /* exactly fits */
    char big[64];
    assert_int_equal(gp_read_file(root, "/f", big, sizeof big), 0);
    assert_string_equal(big, "hello world");
    /* An errno left by an earlier call (EINTR) does not make a read that
     * succeeded look interrupted. */
    errno = EINTR;
    assert_int_equal(gp_read_file(root, "/f", big, sizeof big), 0);
    assert_string_equal(big, "hello world");
    char *got = NULL;
    errno = EINTR;
    assert_int_equal(gp_read_text(root, "/f", 64, &got), 0);
    assert_string_equal(got, "hello world");
    free(got);
    assert_int_equal(gp_read_file(root, "/missing", big, sizeof big), -1);
    assert_string_equal(big, "");
    assert_int_equal(gp_read_file(root, "/f", big, 0), -1);
    /* An empty file is an empty text, not an error; a one-byte buffer
     * holds only an empty file (anything else does not fit). */
    sr_put(root, "empty", "");
    strcpy(big, "stale");
    assert_int_equal(gp_read_file(root, "/empty", big, sizeof big), 0);
    assert_string_equal(big, "");
    char one[1] = {'x'};
    assert_int_equal(gp_read_file(root, "/empty", one, sizeof one), 0);
    assert_int_equal(one[0], '\0');
    errno = 0;
    assert_int_equal(gp_read_file(root, "/f", one, sizeof one), -1);
    assert_int_equal(errno, EFBIG);

    /* Whole files on the heap, up to a bound. */
    char *text = NULL;
    assert_int_equal(gp_read_text(root, "/f", 1 << 20, &text), 0);
    assert_string_equal(text, "hello world");
    free(text);
    assert_int_equal(gp_read_text(root, "/f", 11, &text), 0);
    assert_string_equal(text, "hello world");
    free(text);
    text = (char *)&text;
    errno = 0;
    assert_int_equal(gp_read_text(root, "/f", 10, &text), -1);
    assert_int_equal(errno, EFBIG);
    assert_null(text);
    assert_int_equal(gp_read_text(root, "/missing", 100, &text), -1);
    assert_int_equal(errno, ENOENT);
    assert_null(text);
    /* Longer than the first read (4 KiB), and a /proc file (size 0). */
    char *long_text = malloc(70000);
    assert_non_null(long_text);
    for (size_t i = 0; i < 69999; i++)
        long_text[i] = (char)('a' + i % 26);
    long_text[69999] = '\0';
    sr_put(root, "long", long_text);
    assert_int_equal(gp_read_text(root, "/long", 1 << 20, &text), 0);
    assert_string_equal(text, long_text);
    free(text);
    free(long_text);
    assert_int_equal(gp_read_text(NULL, "/proc/self/status", 1 << 20, &text), 0);
    assert_non_null(strstr(text, "VmSize:"));
    uint64_t size = 0, data = 0;
    assert_int_equal(gp_parse_proc_status(text, &size, &data), 0);
    assert_true(size > 0 && data > 0 && data < size);
    free(text);
    /* with stdin closed the file may get descriptor 0: still a file */
    int saved = dup(0);
    assert_true(saved > 0);
    close(0);
    int r = gp_read_file(root, "/f", big, sizeof big);
    assert_int_equal(dup2(saved, 0), 0);
    close(saved);
    assert_int_equal(r, 0);
    assert_string_equal(big, "hello world");
    sr_rm_tree(root);
}

/* The open descriptors of this process: how many, and which (set[fd] = 1; fds past the
 * array are counted, not marked). */
#define FD_MARKS 4096
static int open_fds_marked(unsigned char *set)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0, self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd == self)
            continue; /* the directory's own descriptor */
        n++;
        if (set && fd >= 0 && fd < FD_MARKS)
            set[fd] = 1;
    }
    closedir(d);
    return n;
}

static int open_fds(void)
{
    return open_fds_marked(NULL);
}

/* Each descriptor open now that was not in before[], with what it points
 * to: the message of a test that finds one left open. */
static void print_new_fds(const unsigned char *before)
{
    static unsigned char now[FD_MARKS];
    memset(now, 0, sizeof now);
    (void)open_fds_marked(now);
    for (int fd = 0; fd < FD_MARKS; fd++) {
        if (!now[fd] || before[fd])
            continue;
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        target[len > 0 ? len : 0] = '\0';
        print_message("left open: fd %d -> %s\n", fd, len > 0 ? target : "(unreadable)");
    }
}

/* Every /proc and /sys read gives its descriptor back, on success and on
 * error (a cgroup file that is a directory: open succeeds, read fails). */
static void test_reads_release_descriptors(void **state)
{
    (void)state;
    char *root = fake_root();
    sr_put(root, "proc/self/cgroup", "4:memory:/m\n0::/a\n");
    sr_put(root, "proc/cpuinfo", "processor : 0\nmodel name : Sim CPU\n"
                                 "flags : sse4_2 avx avx2 fma\ncpu MHz : 1000.0\n");
    sr_put(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "2000000\n");
    sr_put(root, "sys/fs/cgroup/a/memory.max", "4294967296\n");
    sr_put(root, "sys/fs/cgroup/a/memory.stat", "inactive_file 1\n");
    char dir[GP_PATH_LEN];
    snprintf(dir, sizeof dir, "%s/sys/fs/cgroup/a/memory.current", root);
    sr_mkdirs(dir); /* a directory where a file is expected */
    sr_put(root, "sys/fs/cgroup/memory/m/memory.limit_in_bytes", "8589934592\n");
    sr_put(root, "sys/fs/cgroup/memory/m/memory.usage_in_bytes", "1073741824\n");
    sr_put(root, "sys/fs/cgroup/memory/m/memory.stat", "total_inactive_file 0\n");

    char buf[64];
    /* One round first: what a library opens once per process (a driver's
     * device nodes) is not a leak; what each context leaves open is. */
    static unsigned char marks[FD_MARKS];
    int before = 0;
    for (int i = -1; i < 20; i++) {
        if (i == 0) {
            memset(marks, 0, sizeof marks);
            before = open_fds_marked(marks);
        }
        gpuprobe_context *ctx = new_ctx();
        gp_test_set_sysroot(ctx, root);
        const char *name = NULL;
        assert_int_equal(gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &name),
                         GPUPROBE_OK);
        assert_string_equal(name, "Sim CPU");
        gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
        assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);
        /* the v2 level's usage is unreadable (0): room 4 GiB; v1: 7 GiB */
        assert_int_equal(info.cgroup_limit_bytes, 4 * GIB);
        assert_int_equal(info.available_bytes, 4 * GIB);
        gpuprobe_context_destroy(ctx);
        /* read() failing after open() */
        assert_int_equal(gp_read_file(NULL, dir, buf, sizeof buf), -1);
        assert_string_equal(buf, "");
        assert_int_equal(gp_read_file(root, "/sys/fs/cgroup/a/memory.max", buf, sizeof buf), 0);
        assert_string_equal(buf, "4294967296\n");
    }
    int after = open_fds();
    if (after != before) {
        print_new_fds(marks);
        fail_msg("%d descriptors open after 20 contexts, %d before", after, before);
    }
    sr_rm_tree(root);
}

/* ---- the public struct ---- */

static void test_struct_size_and_flags(void **state)
{
    (void)state;
    gpuprobe_context *ctx = new_ctx();
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    /* GPUPROBE_DEVICE_MEMORY_NO_CONTEXT is the one flag (no effect on the
     * CPU); every other bit is refused. */
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 2), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "flags"));
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, ~GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, GPUPROBE_DEVICE_MEMORY_NO_CONTEXT),
                     GPUPROBE_OK);
    assert_int_equal(info.source, GPUPROBE_MEMORY_SOURCE_HOST);
    assert_int_equal(info.used_bytes, info.total_bytes - info.available_bytes);
    assert_int_equal(info.reserved_bytes, 0);
    assert_int_equal(info.context_held, 0);
    assert_int_equal(gpuprobe_device_memory(ctx, 0, NULL, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuprobe_device_memory(NULL, 0, &info, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    size_t n;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_int_equal(gpuprobe_device_memory(ctx, n, &info, 0), GPUPROBE_ERR_NOT_FOUND);

    /* smaller than the 1.0 struct: refused, nothing written */
    memset(&info, 0xAB, sizeof info);
    info.size = offsetof(gpuprobe_memory_info, flags);
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(ctx), "size"));
    assert_int_equal(info.total_bytes, UINT64_C(0xABABABABABABABAB));
    info.size = 0;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_ERR_INVALID_ARGUMENT);

    /* a larger struct (a newer caller): trailing bytes are left alone */
    struct {
        gpuprobe_memory_info info;
        unsigned char tail[64];
    } big;
    memset(&big, 0xCD, sizeof big);
    big.info.size = sizeof big;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &big.info, 0), GPUPROBE_OK);
    assert_true(big.info.total_bytes > 0);
    for (size_t i = 0; i < sizeof big.tail; i++)
        assert_int_equal(big.tail[i], 0xCD);
    assert_int_equal(big.info.size, sizeof big);

    /* exactly the 1.0 fields (no trailing padding): accepted, and the 1.1
     * fields (beyond a 1.0 caller's struct) are not written */
    memset(&info, 0xEE, sizeof info);
    info.size = offsetof(gpuprobe_memory_info, flags) + sizeof info.flags;
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);
    assert_true(info.total_bytes > 0);
    assert_int_equal(info.used_bytes, UINT64_C(0xEEEEEEEEEEEEEEEE));
    assert_int_equal(info.source, 0xEEEEEEEEu);
    /* sizeof the 1.0 struct (with its padding): the same */
    memset(&info, 0xEE, sizeof info);
    info.size = offsetof(gpuprobe_memory_info, used_bytes);
    assert_int_equal(gpuprobe_device_memory(ctx, 0, &info, 0), GPUPROBE_OK);
    assert_int_equal(info.used_bytes, UINT64_C(0xEEEEEEEEEEEEEEEE));
    assert_int_equal(info.context_held, 0xEEEEEEEEu);
    gpuprobe_context_destroy(ctx);
}

/* ---- simulated CUDA memory ---- */

static void test_fake_cuda_memory(void **state)
{
    (void)state;
    static const gp_fake_cuda_device devs[] = {
        {"Fake A", 8, 0, 16 * GIB, 15 * GIB, 0},
        {"Fake B", 9, 0, 80 * GIB, 70 * GIB, 600 * MIB},
    };
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 2, devs};
    gpuprobe_context *ctx = new_ctx();
    gp_test_set_cuda(ctx, &fake);
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    assert_int_equal(gpuprobe_device_memory(ctx, 1, &info, 0), GPUPROBE_OK);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 15 * GIB);
    assert_int_equal(info.physical_bytes, 16 * GIB);
    assert_int_equal(info.cgroup_limit_bytes, UINT64_MAX);
    assert_int_equal(info.context_bytes, 0);
    assert_int_equal(info.flags, 0); /* no context made or measured */
    assert_int_equal(gpuprobe_device_memory(ctx, 2, &info, 0), GPUPROBE_OK);
    assert_int_equal(info.total_bytes, 80 * GIB);
    assert_int_equal(info.available_bytes, 70 * GIB);
    assert_int_equal(info.context_bytes, 600 * MIB);
    assert_true(info.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED);
    assert_int_equal(info.used_bytes, 10 * GIB);
    assert_int_equal(info.source, GPUPROBE_MEMORY_SOURCE_NVML);
    assert_int_equal(info.context_held, 0);
    gp_test_set_cuda_held(ctx, 0x2); /* this process holds a context on cuda:1 */
    assert_int_equal(gpuprobe_device_memory(ctx, 2, &info, 0), GPUPROBE_OK);
    assert_int_equal(info.context_held, 1);
    assert_int_equal(info.available_bytes, 70 * GIB);
    assert_int_equal(gpuprobe_device_memory(ctx, 3, &info, 0), GPUPROBE_ERR_NOT_FOUND);
    /* success clears the failure's message */
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    assert_int_equal(gpuprobe_device_memory(ctx, 1, &info, 0), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    gpuprobe_context_destroy(ctx);
}

/* ---- the driver's own figures (real code path, functions replaced) ---- */

#ifdef GPUPROBE_HAVE_CUDA
static size_t drv_free, drv_total;
static CUresult fake_device_get(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return CUDA_SUCCESS;
}
static CUresult fake_ctx_state(CUdevice d, unsigned *flags, int *active)
{
    (void)d;
    *flags = 0;
    *active = 1; /* a context exists: nothing to measure */
    return CUDA_SUCCESS;
}
static CUresult fake_retain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}
static CUresult fake_release(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}
static CUresult fake_push(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}
static CUresult fake_pop(CUcontext *c)
{
    *c = NULL;
    return CUDA_SUCCESS;
}
static CUresult fake_mem_info(size_t *free_b, size_t *total_b)
{
    *free_b = drv_free;
    *total_b = drv_total;
    return CUDA_SUCCESS;
}
#endif

/* A driver that reports more free memory than the device has: free is
 * clamped to the total on the real path too (cuMemGetInfo_v2, here a
 * replaced function pointer in the loader state). */
static void test_driver_free_clamped(void **state)
{
    (void)state;
#ifndef GPUPROBE_HAVE_CUDA
    skip();
#else
    gpuprobe_context *ctx = new_ctx();
    gp_cuda *c = calloc(1, sizeof *c);
    assert_non_null(c);
    static int lib;
    c->rt_lib = c->drv_lib = &lib;   /* "loaded", never closed: */
    c->rt_initialized = c->drv_initialized = 1;
    c->nvml.tried = 1;               /* no NVML */
    c->drv.DeviceGet = fake_device_get;
    c->drv.DevicePrimaryCtxGetState = fake_ctx_state;
    c->drvctx.PrimaryCtxRetain = fake_retain;
    c->drvctx.PrimaryCtxRelease = fake_release;
    c->drvctx.CtxPushCurrent = fake_push;
    c->drvctx.CtxPopCurrent = fake_pop;
    c->drvctx.MemGetInfo = fake_mem_info;
    ctx->cuda = c;
    ctx->cuda_cause = GPUPROBE_CUDA_AVAILABLE;
    gp_device *devs = calloc(2, sizeof *devs);
    assert_non_null(devs);
    assert_int_equal(gp_cpu_describe(&devs[0], NULL), GPUPROBE_OK);
    devs[1].kind = GPUPROBE_DEVICE_CUDA;
    devs[1].cuda_index = 0;
    strcpy(devs[1].spec, "cuda:0");
    strcpy(devs[1].name, "Replaced driver");
    ctx->devices = devs;
    ctx->ndevices = 2;
    ctx->enumerated = 1;

    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    drv_total = 16 * GIB;
    drv_free = 20 * GIB;
    assert_int_equal(gpuprobe_device_memory(ctx, 1, &info, 0), GPUPROBE_OK);
    assert_int_equal(info.total_bytes, 16 * GIB);
    assert_int_equal(info.available_bytes, 16 * GIB);
    drv_free = 5 * GIB; /* sane figures pass unchanged */
    assert_int_equal(gpuprobe_device_memory(ctx, 1, &info, 0), GPUPROBE_OK);
    assert_int_equal(info.available_bytes, 5 * GIB);
    gpuprobe_context_destroy(ctx);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_memory_real),
        cmocka_unit_test(test_cgroup_v2_limit),
        cmocka_unit_test(test_cgroup_stat_overflow),
        cmocka_unit_test(test_cgroup_long_files),
        cmocka_unit_test(test_cgroup_path_too_long),
        cmocka_unit_test(test_cgroup_v2_max),
        cmocka_unit_test(test_cgroup_v2_limit_above_ram),
        cmocka_unit_test(test_cgroup_cuts_available_only),
        cmocka_unit_test(test_cgroup_cuts_total_only),
        cmocka_unit_test(test_cgroup_v1_limit),
        cmocka_unit_test(test_cgroup_v1_unlimited_and_mount_root),
        cmocka_unit_test(test_cgroup_namespace_path),
        cmocka_unit_test(test_cgroup_dotdot),
        cmocka_unit_test(test_cgroup_garbage),
        cmocka_unit_test(test_meminfo_missing_or_garbage),
        cmocka_unit_test(test_parse_meminfo),
        cmocka_unit_test(test_parse_cgroup_value),
        cmocka_unit_test(test_parse_proc_cgroup),
        cmocka_unit_test(test_parsers_random_input),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_host_room),
        cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_parse_empty_input),
        cmocka_unit_test(test_fits_names_limit),
        cmocka_unit_test(test_limits_without_proc_status),
        cmocka_unit_test(test_reads_release_descriptors),
        cmocka_unit_test(test_struct_size_and_flags),
        cmocka_unit_test(test_fake_cuda_memory),
        cmocka_unit_test(test_driver_free_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
