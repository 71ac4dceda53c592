/*
 * limit_run.c - one CPU matmul under a memory limit, in a fresh process,
 * run by test_limits.c in a child with a watchdog.
 * Linked with the shared libgpuprobe only, so OpenBLAS is not in the
 * process until the library opens it.
 *
 *   limit_run as|data before|after HEADROOM M THREADS ok|oom
 *       Set RLIMIT_AS or RLIMIT_DATA to what the process uses now (VmSize
 *       or VmData) plus HEADROOM MiB ("=N": N KiB, absolute) - before
 *       OpenBLAS is loaded, or after (loaded through a BLAS attribute, its
 *       pool given time to map its buffers) - then run an M x M x M fp32
 *       matmul with GPUPROBE_MATMUL_CPU_THREADS = THREADS.
 *   limit_run cgroup DIR
 *       Join the cgroup DIR (its memory limit set by the caller), then run
 *       a matmul whose A, B and C just fit in the room the cgroup leaves
 *       (OpenBLAS's panels do not), and a small one.
 *
 * With LIMIT_RUN_EXPECT set, the library's message must also contain it;
 * with LIMIT_RUN_REJECT set, it must not contain that.
 *
 * Prints what the library said; exits 0 when the status is the expected
 * one (for "oom", with a message naming the limit), 1 otherwise, 2 on a
 * usage error. It returns from main(), so OpenBLAS's exit handlers run: a
 * process whose OpenBLAS thread spins on a buffer it cannot map never
 * ends, which the watchdog reports.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <gpuprobe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MiB (UINT64_C(1) << 20)

/* A "Key:   N kB" field of /proc/self/status, in bytes; 0 if absent. */
static uint64_t status_bytes(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':')
            kb = strtoull(line + kl + 1, NULL, 10);
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* Wait until VmSize stops growing (OpenBLAS's pool maps its buffers from
 * its own threads, after the load returns): unchanged over 200 ms, at most
 * 10 s. One quiet 10 ms interval is not enough on a busy machine, where a
 * pool thread may not have run yet; a limit set before it maps its buffer
 * leaves it spinning, and the process never ends. */
static void settle(void)
{
    struct timespec ten_ms = {0, 10000000};
    uint64_t last = status_bytes("VmSize");
    for (int i = 0, quiet = 0; i < 1000 && quiet < 20; i++) {
        nanosleep(&ten_ms, NULL);
        uint64_t now = status_bytes("VmSize");
        quiet = now == last ? quiet + 1 : 0;
        last = now;
    }
}

static gpuprobe_status run(gpuprobe_context *ctx, int64_t m, int64_t threads,
                           int verify)
{
    gpuprobe_matmul_options *o = NULL;
    if (gpuprobe_matmul_options_create(&o) != GPUPROBE_OK)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, m);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, threads);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP, 0);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_VERIFY, verify);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    printf("limit_run: matmul %lldx%lldx%lld, %lld thread(s): %s%s%s\n",
           (long long)m, (long long)m, (long long)m, (long long)threads,
           gpuprobe_status_name(st), st ? ": " : "", gpuprobe_last_error(ctx));
    fflush(stdout);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    return st;
}

/* Load OpenBLAS through the library (a BLAS attribute). */
static int load_blas(gpuprobe_context *ctx)
{
    const char *core = NULL;
    gpuprobe_status st = gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core);
    if (st != GPUPROBE_OK) {
        printf("limit_run: loading OpenBLAS: %s: %s\n", gpuprobe_status_name(st),
               gpuprobe_last_error(ctx));
        return -1;
    }
    settle();
    return 0;
}

static int in_cgroup(gpuprobe_context *ctx, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
        printf("limit_run: cannot join %s\n", dir);
        return 1;
    }
    if (load_blas(ctx) != 0)
        return 1;
    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    if (gpuprobe_device_memory(ctx, 0, &mi, 0) != GPUPROBE_OK ||
        !(mi.flags & GPUPROBE_MEMORY_CGROUP_LIMITED)) {
        printf("limit_run: the library does not see the cgroup limit\n");
        return 1;
    }
    /* A, B and C one MiB short of the room: OpenBLAS's panels (a few MiB)
     * would push the process over the limit, into the OOM killer. */
    int64_t m = (int64_t)sqrt((double)(mi.available_bytes - MiB) / 12.0);
    printf("limit_run: cgroup room %llu bytes, matmul of %lld\n",
           (unsigned long long)mi.available_bytes, (long long)m);
    gpuprobe_status st = run(ctx, m, 1, 0);
    if (st != GPUPROBE_ERR_OUT_OF_MEMORY ||
        !strstr(gpuprobe_last_error(ctx), "cgroup memory limit"))
        return 1;
    return run(ctx, 128, 1, 1) == GPUPROBE_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return 1;
    int rc = 2;
    if (argc == 3 && strcmp(argv[1], "cgroup") == 0) {
        rc = in_cgroup(ctx, argv[2]);
    } else if (argc == 7) {
        int as = strcmp(argv[1], "as") == 0;
        int after = strcmp(argv[2], "after") == 0;
        const char *headroom = argv[3];
        int64_t m = atoll(argv[4]), threads = atoll(argv[5]);
        int want_oom = strcmp(argv[6], "oom") == 0;
        if (after && load_blas(ctx) != 0) {
            gpuprobe_context_destroy(ctx);
            return 1;
        }
        uint64_t used = status_bytes(as ? "VmSize" : "VmData");
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max =
            headroom[0] == '='
                ? (rlim_t)strtoull(headroom + 1, NULL, 10) * 1024
                : (rlim_t)(used + strtoull(headroom, NULL, 10) * MiB);
        if (setrlimit(as ? RLIMIT_AS : RLIMIT_DATA, &rl) != 0) {
            perror("limit_run: setrlimit");
            gpuprobe_context_destroy(ctx);
            return 1;
        }
        printf("limit_run: %s limit %llu bytes, %llu in use\n",
               as ? "RLIMIT_AS" : "RLIMIT_DATA", (unsigned long long)rl.rlim_cur,
               (unsigned long long)used);
        gpuprobe_status st = run(ctx, m, threads, 1);
        const char *limit = as ? "RLIMIT_AS" : "RLIMIT_DATA";
        rc = want_oom ? !(st == GPUPROBE_ERR_OUT_OF_MEMORY &&
                          strstr(gpuprobe_last_error(ctx), limit))
                      : st != GPUPROBE_OK;
        const char *expect = getenv("LIMIT_RUN_EXPECT");
        const char *reject = getenv("LIMIT_RUN_REJECT");
        if (rc == 0 && expect && !strstr(gpuprobe_last_error(ctx), expect)) {
            printf("limit_run: the message does not say \"%s\"\n", expect);
            rc = 1;
        }
        if (rc == 0 && reject && strstr(gpuprobe_last_error(ctx), reject)) {
            printf("limit_run: the message says \"%s\"\n", reject);
            rc = 1;
        }
    }
    if (rc == 2)
        fprintf(stderr, "usage: limit_run as|data before|after HEADROOM M THREADS "
                        "ok|oom, or limit_run cgroup DIR\n");
    gpuprobe_context_destroy(ctx);
    return rc;
}
