/*
 * cpu_blas.c - run-time loading of OpenBLAS, and what its buffers and
 * threads cost (see cpu_blas.h).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cpu_blas.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* dlsym into a typed function pointer; 0 when found. */
#define BIND(lib, name, field) (gp_dlsym((lib), (name), &(field), sizeof(field)) != 0)

/* The address space of one more thread: its stack and guard page, as
 * pthread_create() maps them by default (RLIMIT_STACK, usually 8 MiB). */
static uint64_t thread_stack_bytes(void)
{
    size_t stack = 8u << 20, guard = 4096;
#if defined(__GLIBC__)
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) == 0) {
        (void)pthread_attr_getstacksize(&attr, &stack);
        (void)pthread_attr_getguardsize(&attr, &guard);
        pthread_attr_destroy(&attr);
    }
#endif
    return (uint64_t)stack + guard;
}

/* An upper bound on the threads OpenBLAS starts when it is loaded. Its
 * rule (blas_get_cpu_number): OPENBLAS_NUM_THREADS, else GOTO_NUM_THREADS,
 * else OMP_NUM_THREADS, else MAX_THREADS; at most the CPUs configured. */
static int threads_at_load(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (cpus < 1)
        cpus = 1;
    static const char *const vars[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                       "OMP_NUM_THREADS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = gp_getenv(vars[i]);
        long n = v ? strtol(v, NULL, 10) : 0;
        if (n > 0)
            return (int)(n < cpus ? n : cpus);
    }
    return cpus < 4096 ? (int)cpus : 4096;
}

/* VmSize of this process, 0 when unknown. */
static uint64_t vm_size(void)
{
    char *text = NULL;
    uint64_t size = 0, data = 0;
    if (gp_read_text(NULL, "/proc/self/status", GP_FILE_MAX, &text) == 0 &&
        gp_parse_proc_status(text, &size, &data) != 0)
        size = 0;
    free(text);
    return size;
}

/* Loading OpenBLAS starts its pool: check the address space it will map.
 * *limited is set when an address-space limit applies. */
static gpuprobe_status check_load(gpuprobe_context *ctx, int *limited)
{
    *limited = 0;
    gp_host_memory h;
    gpuprobe_status st = gp_host_memory_read(ctx, ctx->sysroot, &h);
    if (st == GPUPROBE_ERR_OUT_OF_MEMORY)
        return st;
    if (st != GPUPROBE_OK) { /* nothing known: go ahead */
        ctx->error[0] = '\0';
        return GPUPROBE_OK;
    }
    *limited = h.as_limit != UINT64_MAX || h.data_limit != UINT64_MAX;
    int workers = threads_at_load() - 1;
    uint64_t stack = thread_stack_bytes();
    uint64_t need = GP_OPENBLAS_IMAGE +
                    (uint64_t)workers * (GP_OPENBLAS_BUFFER + stack);
    char detail[160];
    gp_snprintf(detail, sizeof detail,
                "the library, and %d pool thread%s with a buffer of %.1f MiB "
                "and a stack of %.1f MiB each", workers, workers == 1 ? "" : "s",
                (double)GP_OPENBLAS_BUFFER / 1048576.0, (double)stack / 1048576.0);
    return gp_host_fits(ctx, &h, 0, "", need, detail,
                        "loading OpenBLAS (" GP_OPENBLAS_SONAME ")");
}

/* Under an address-space limit, wait (at most a second) until the pool's
 * threads, started by the load, have mapped their buffers: VmSize has grown
 * by a buffer and a stack per thread. Later checks then see them. */
static void settle(const gp_openblas *b, uint64_t before)
{
    int workers = b->get_num_threads() - 1;
    if (workers < 1 || before == 0)
        return;
    uint64_t target = before + (uint64_t)workers *
                                   (GP_OPENBLAS_BUFFER + thread_stack_bytes());
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 1000 && vm_size() < target; i++)
        nanosleep(&ms, NULL);
}

/* MAX_THREADS=N in openblas_get_config(); 0 when not said. */
static int config_max_threads(const char *config)
{
    const char *p = config ? strstr(config, "MAX_THREADS=") : NULL;
    long n = p ? strtol(p + 12, NULL, 10) : 0;
    return n > 0 && n < 1 << 20 ? (int)n : 0;
}

gpuprobe_status gp_openblas_get(gpuprobe_context *ctx, const gp_openblas **out)
{
    if (ctx->openblas) {
        *out = ctx->openblas;
        return GPUPROBE_OK;
    }
    gp_openblas *b = calloc(1, sizeof *b);
    if (!b)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating %zu bytes to load OpenBLAS", sizeof *b);
    /* Already in the process (linked by the program, or opened by another
     * context): nothing new is started. */
    b->lib = gp_dlopen(GP_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    int limited = 0;
    uint64_t before = 0;
    if (!b->lib) {
        gpuprobe_status st = check_load(ctx, &limited);
        if (st != GPUPROBE_OK) {
            free(b);
            return st;
        }
        if (limited)
            before = vm_size();
        b->lib = gp_dlopen(GP_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    }
    if (!b->lib) {
        char why[256];
        gp_dlerror(why, sizeof why);
        free(b);
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "OpenBLAS (%s) could not be loaded: %s (Debian: "
                       "libopenblas0)",
                       GP_OPENBLAS_SONAME, why);
    }
    const char *missing = NULL;
    if (BIND(b->lib, "cblas_sgemm", b->sgemm))
        missing = "cblas_sgemm";
    else if (BIND(b->lib, "cblas_dgemm", b->dgemm))
        missing = "cblas_dgemm";
    else if (BIND(b->lib, "openblas_get_num_threads", b->get_num_threads))
        missing = "openblas_get_num_threads";
    else if (BIND(b->lib, "openblas_set_num_threads", b->set_num_threads))
        missing = "openblas_set_num_threads";
    else if (BIND(b->lib, "openblas_get_corename", b->get_corename))
        missing = "openblas_get_corename";
    else if (BIND(b->lib, "openblas_get_config", b->get_config))
        missing = "openblas_get_config";
    if (missing) {
        /* Not OpenBLAS after all: drop our reference. */
        dlclose(b->lib);
        free(b);
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "%s has no %s: not an OpenBLAS build libgpuprobe can use",
                       GP_OPENBLAS_SONAME, missing);
    }
    /* Optional: both or neither. */
    b->pool_threads = dlsym(b->lib, "blas_num_threads");
    b->pool_running = dlsym(b->lib, "blas_server_avail");
    if (!b->pool_threads || !b->pool_running)
        b->pool_threads = b->pool_running = NULL;
    b->max_threads = config_max_threads(b->get_config());
    if (limited)
        settle(b, before);
    ctx->openblas = b;
    *out = b;
    return GPUPROBE_OK;
}

void gp_openblas_release(gp_openblas *blas)
{
    free(blas); /* the library itself stays loaded: see cpu_blas.h */
}

void gp_openblas_name(const gp_openblas *blas, char *dst, size_t size)
{
    /* openblas_get_config() reads e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH
     * NO_AFFINITY Haswell MAX_THREADS=64": keep the name and version, then
     * add the core actually selected at run time. */
    const char *cfg = blas->get_config();
    const char *core = blas->get_corename();
    char ver[64] = "OpenBLAS";
    if (cfg) {
        size_t len = 0, spaces = 0;
        while (cfg[len] && len + 1 < sizeof ver) {
            if (cfg[len] == ' ' && ++spaces == 2)
                break;
            len++;
        }
        memcpy(ver, cfg, len);
        ver[len] = '\0';
    }
    gp_snprintf(dst, size, "%s %s", ver, core && core[0] ? core : "unknown-core");
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

void gp_openblas_cost(const gp_openblas *b, int64_t threads, int64_t m,
                      int64_t n, int64_t k, size_t elem, gp_blas_cost *out)
{
    int64_t t = threads > 0 ? threads : b->get_num_threads();
    if (b->max_threads > 0 && t > b->max_threads)
        t = b->max_threads;
    if (t < 1)
        t = 1;
    /* Pool threads after the run started, and those running before it
     * (none known: all of them may have to start). */
    int64_t pool = 1, running = 0;
    if (b->pool_threads) {
        pool = __atomic_load_n(b->pool_threads, __ATOMIC_RELAXED);
        running = __atomic_load_n(b->pool_running, __ATOMIC_RELAXED) ? pool - 1 : 0;
    }
    int64_t workers = (t > pool ? t : pool) - 1;
    int64_t fresh = workers > running ? workers - running : 0;
    out->threads = (int)t;
    out->new_threads = (int)fresh;
    out->address_space = GP_OPENBLAS_BUFFER +
                         (uint64_t)fresh * (GP_OPENBLAS_BUFFER + thread_stack_bytes());
    /* C = A B row-major is C^T = B^T A^T to OpenBLAS: its panels are
     * P x Q of B^T (n x k) per thread and Q x m of A^T, shared out. */
    uint64_t q = (uint64_t)min64(GP_OPENBLAS_BLOCK, k);
    uint64_t panels = (uint64_t)elem * q *
                      ((uint64_t)t * (uint64_t)min64(GP_OPENBLAS_BLOCK, n) + (uint64_t)m);
    uint64_t mapped = (uint64_t)t * GP_OPENBLAS_BUFFER;
    out->memory = panels < mapped ? panels : mapped;
}
