/*
 * cpu_bandwidth.c - the CPU backend of the bandwidth measurement: the read,
 * copy and triad kernels (bw_numbers.c) on one thread per core this
 * process may use, behind the table of operations of bandwidth_internal.h
 * (the protocol is bandwidth.c's).
 *
 * Three arrays of doubles, a (1.0), b and c (0.0), are mapped untouched,
 * each in a mapping of its own, b and c a page and 17 cache lines, and
 * twice that, past their mapping's start (GP_BW_STAGGER); each thread,
 * pinned to its CPU where the system allows it, writes its own part of
 * each first, so the kernel places those pages on its NUMA node
 * (first touch). A pass: every thread waits at a barrier, the first takes
 * the clock, each runs the kernel over its part, a second barrier, the
 * first takes the clock again. Read sums a (read_streams too: each thread
 * its part as GPUPROBE_BANDWIDTH_STREAMS runs side by side); copy is
 * c = a; triad b = a + 3 c. At the end every element is checked: c is 1
 * if copy ran, b is 4 (1 without copy) if triad ran, each part of a sums
 * to its length.
 *
 * Each test runs the kernels of one instruction set (bw_numbers.c): where
 * the CPU runs more than one and the run has a warm-up, trial passes of
 * each set before the warm-up choose the fastest, per test.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bandwidth_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The stack of a worker: the kernels need little. */
#define GP_BW_STACK ((size_t)256 << 10)
/* Elements per part boundary: a 4 KiB page of doubles. */
#define GP_BW_PART 512
/* How far past its mapping's start array i begins: i times this. A large
 * mapping starts on a 2 MiB boundary (Linux 6.7 and later), so arrays at
 * their mappings' starts lie at the same offset within every page and
 * every 2 MiB; on a Zen 4 VM their copy ran 15-45% slower and their
 * triad up to 13% slower than with arrays 17 lines, half a page, a page,
 * or a page and 17 lines apart, whichever order the pages were first
 * touched in (docs/bandwidth.md). */
#define GP_BW_STAGGER ((size_t)4096 + 17 * 64)
/* Trial passes of each kernel set per test, in turns (the order reversed
 * each time). */
#define GP_BW_TRIALS 2

enum { CMD_INIT, CMD_PASS, CMD_CHECK };

void (*gp_test_bw_corrupt)(double *a, double *b, double *c, size_t n);

struct cpu_bw;

typedef struct bw_worker {
    struct cpu_bw *run;
    size_t index;
    int cpu;                   /* the CPU to pin to, -1 none */
    int pinned;                /* it is */
    size_t lo, hi;             /* its part of each array */
    double sum;                /* the read kernel's last sum */
    size_t bad;                /* elements the check found wrong */
} bw_worker;

typedef struct cpu_bw {
    int *order;                /* allowed CPUs in placement order */
    size_t norder, cores;
    size_t nthreads;
    bw_worker *w;
    gp_pool *pool;
    double *a, *b, *c;
    void *map[3];              /* the mappings a, b and c lie in */
    size_t n, map_bytes;
    unsigned ran;              /* tests that have run (GP_BW_BIT) */
    const gp_bw_kernels *sets; /* the kernel sets this CPU runs, widest first */
    size_t nsets;
    const gp_bw_kernels *use[GP_BW_NTESTS]; /* the set each test runs */
    double trial_gbps[GP_BW_NTESTS][GP_BW_MAX_SETS]; /* each set's best trial */
    /* the command every worker carries out (gp_pool_run orders it) */
    int cmd;
    gpuprobe_bandwidth_test test;
    size_t reps;
    /* the barrier of a timed pass */
    atomic_uint arrived, phase;
    double t0, t1;
} cpu_bw;

/* ---- placement ---------------------------------------------------------- */

/* Where the threads go, their number and the last-level caches there. */
static gpuprobe_status place(gpuprobe_context *ctx, cpu_bw *r, gp_bw_job *job)
{
    size_t nbits = 0;
    unsigned char *allowed = NULL;
    gpuprobe_status st = gp_host_allowed_cpus(ctx, &allowed, &nbits);
    if (st != GPUPROBE_OK)
        return st;
    r->order = malloc(nbits * sizeof *r->order);
    if (r->order)
        r->norder = gp_host_cpu_order(ctx->sysroot, allowed, nbits, r->order, nbits, &r->cores);
    free(allowed);
    if (!r->order)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the CPU list");
    if (r->norder == 0)
        return gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "sched_getaffinity gave no CPU");
    r->nthreads = job->cpu_threads > 0 ? (size_t)job->cpu_threads : r->cores;
    size_t used = r->nthreads < r->norder ? r->nthreads : r->norder;
    if (gp_host_llc_bytes(ctx->sysroot, r->order, used, &job->cache_bytes) != 0)
        job->cache_bytes = 0;
    job->threads = (int)r->nthreads;
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_release(gpuprobe_context *ctx, void *state, gpuprobe_status st);

static gpuprobe_status cpu_open(gpuprobe_context *ctx, gp_bw_job *job, void **state)
{
    cpu_bw *r = calloc(1, sizeof *r);
    if (!r)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the bandwidth state");
    gpuprobe_status st = place(ctx, r, job);
    if (st != GPUPROBE_OK)
        return cpu_release(ctx, r, st);
    job->host_buffers = 3;
    job->device_buffers = 0;
    job->device_room = UINT64_MAX;
    job->extra_space = (uint64_t)r->nthreads * (GP_BW_STACK + 4096) + 3 * 2 * GP_BW_STAGGER;
    gp_dmi_memory dmi;
    gp_host_dmi_memory(ctx->sysroot, &dmi);
    job->memory_peak_gbps = dmi.gbps;
    gp_strlcpy(job->peak_source, dmi.why, sizeof job->peak_source);
    *state = r;
    return GPUPROBE_OK;
}

/* ---- the workers -------------------------------------------------------- */

static void barrier(cpu_bw *r)
{
    unsigned phase = atomic_load(&r->phase);
    if (atomic_fetch_add(&r->arrived, 1) + 1 == r->nthreads) {
        atomic_store(&r->arrived, 0);
        atomic_fetch_add(&r->phase, 1);
        return;
    }
    for (unsigned spins = 0; atomic_load(&r->phase) == phase; spins++)
        if (spins > 1000)
            sched_yield(); /* more threads than CPUs: let the others run */
}

static void init_part(const cpu_bw *r, const bw_worker *w)
{
    for (size_t i = w->lo; i < w->hi; i++) {
        r->a[i] = 1.0;
        r->b[i] = 0.0;
        r->c[i] = 0.0;
    }
}

static void kernel(const cpu_bw *r, bw_worker *w, gpuprobe_bandwidth_test t)
{
    size_t lo = w->lo, len = w->hi - w->lo;
    const gp_bw_kernels *k = r->use[t];
    if (t == GPUPROBE_BANDWIDTH_TEST_READ)
        w->sum = k->sum(r->a + lo, len);
    else if (t == GPUPROBE_BANDWIDTH_TEST_READ_STREAMS)
        w->sum = k->sum_streams(r->a + lo, len, GPUPROBE_BANDWIDTH_STREAMS);
    else if (t == GPUPROBE_BANDWIDTH_TEST_COPY)
        k->copy(r->c + lo, r->a + lo, len);
    else
        k->triad(r->b + lo, r->a + lo, r->c + lo, 3.0, len);
}

static void timed_pass(cpu_bw *r, bw_worker *w, gpuprobe_bandwidth_test t, size_t reps)
{
    barrier(r);
    if (w->index == 0)
        r->t0 = gp_now();
    for (size_t i = 0; i < reps; i++)
        kernel(r, w, t);
    barrier(r);
    if (w->index == 0)
        r->t1 = gp_now();
}

/* What each array must hold after the tests that ran (see the top). */
static void check_part(const cpu_bw *r, bw_worker *w)
{
    int copied = (r->ran & GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_COPY)) != 0;
    double want_c = copied ? 1.0 : 0.0;
    double want_b = !(r->ran & GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_TRIAD)) ? 0.0 : copied ? 4.0 : 1.0;
    size_t bad = 0;
    for (size_t i = w->lo; i < w->hi; i++)
        bad += (r->a[i] != 1.0) + (r->b[i] != want_b) + (r->c[i] != want_c);
    if ((r->ran & (GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_READ) |
                   GP_BW_BIT(GPUPROBE_BANDWIDTH_TEST_READ_STREAMS))) &&
        w->sum != (double)(w->hi - w->lo))
        bad++;
    w->bad = bad;
}

/* Pin the calling worker to its CPU. No allocation below CPU_SETSIZE:
 * the workers start together, and the library allocates only on the
 * thread that called it. */
static void pin(bw_worker *w)
{
    if (w->cpu < 0)
        return;
    if (w->cpu < CPU_SETSIZE) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        w->pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
        return;
    }
    cpu_set_t *set = CPU_ALLOC((size_t)w->cpu + 1);
    if (!set)
        return;
    size_t size = CPU_ALLOC_SIZE((size_t)w->cpu + 1);
    CPU_ZERO_S(size, set);
    CPU_SET_S((size_t)w->cpu, size, set);
    w->pinned = pthread_setaffinity_np(pthread_self(), size, set) == 0;
    CPU_FREE(set);
}

/* A worker's share of the command: pinned first, before it writes its
 * part of the arrays (first touch). */
static void work(void *arg)
{
    bw_worker *w = arg;
    cpu_bw *r = w->run;
    if (r->cmd == CMD_INIT) {
        pin(w);
        init_part(r, w);
    } else if (r->cmd == CMD_PASS) {
        timed_pass(r, w, r->test, r->reps);
    } else {
        check_part(r, w);
    }
}

/* Every worker carries out cmd; returns when all have. */
static void command(cpu_bw *r, int cmd, gpuprobe_bandwidth_test t, size_t reps)
{
    r->cmd = cmd;
    r->test = t;
    r->reps = reps;
    gp_pool_run(r->pool, NULL, NULL);
}

/* ---- the operations -------------------------------------------------------- */

static gpuprobe_status map_arrays(gpuprobe_context *ctx, cpu_bw *r, uint64_t bytes)
{
    r->n = (size_t)(bytes / sizeof(double));
    if (bytes > SIZE_MAX - 2 * GP_BW_STAGGER)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "arrays of %llu bytes: more than "
                       "this process can map", (unsigned long long)bytes);
    r->map_bytes = (size_t)bytes + 2 * GP_BW_STAGGER;
    double **arrays[3] = {&r->a, &r->b, &r->c};
    for (int i = 0; i < 3; i++) {
        void *p = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (p == MAP_FAILED)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "mapping 3 arrays of %llu bytes: %s", (unsigned long long)bytes,
                           strerror(errno));
        r->map[i] = p;
        *arrays[i] = (double *)(void *)((char *)p + (size_t)i * GP_BW_STAGGER);
    }
    return GPUPROBE_OK;
}

/* Worker i's part: boundaries on whole pages, the last part to the end. */
static void split(cpu_bw *r, bw_worker *w, size_t i, int pin_threads)
{
    size_t pages = r->n / GP_BW_PART;
    w->run = r;
    w->index = i;
    w->lo = pages * i / r->nthreads * GP_BW_PART;
    w->hi = i + 1 == r->nthreads ? r->n : pages * (i + 1) / r->nthreads * GP_BW_PART;
    w->cpu = pin_threads ? r->order[i % r->norder] : -1;
}

static gpuprobe_status start_workers(gpuprobe_context *ctx, cpu_bw *r, int pin_threads)
{
    r->w = calloc(r->nthreads, sizeof *r->w);
    if (!r->w)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating %zu workers", r->nthreads);
    for (size_t i = 0; i < r->nthreads; i++)
        split(r, &r->w[i], i, pin_threads);
    return gp_pool_open(ctx, "bandwidth", work, r->w, sizeof *r->w, r->nthreads, GP_BW_STACK, 0,
                        &r->pool);
}

/* The kernels each test ran, and the trials that chose them. */
static void describe_kernels(const cpu_bw *r, const gp_bw_job *job, char *out, size_t size)
{
    if (r->nsets < 2 || job->warmup <= 0) {
        gp_snprintf(out, size, "C kernels (%s%s)", r->sets[0].isa,
                    r->nsets < 2 ? "" : ", the widest: no warm-up, no trials");
        return;
    }
    gp_snprintf(out, size, "C kernels, per test the fastest in %d trial passes of each of",
                GP_BW_TRIALS);
    for (size_t s = 0; s < r->nsets; s++)
        gp_appendf(out, size, "%s%s", s ? ", " : " ", r->sets[s].isa);
    for (int t = 0, n = 0; t < GP_BW_NTESTS; t++) {
        if (!(job->tests & GP_BW_BIT(t)))
            continue;
        gp_appendf(out, size, "%s %s %s (", n++ ? ";" : ":",
                   gpuprobe_bandwidth_test_name((gpuprobe_bandwidth_test)t), r->use[t]->isa);
        for (size_t s = 0; s < r->nsets; s++)
            gp_appendf(out, size, "%s%.1f", s ? "/" : "", r->trial_gbps[t][s]);
        gp_appendf(out, size, " GB/s)");
    }
}

/* The method: kernels, threads and where they run. */
static void describe(cpu_bw *r, gp_bw_job *job, int pin_threads)
{
    size_t pinned = 0;
    for (size_t i = 0; i < r->nthreads; i++)
        pinned += (size_t)r->w[i].pinned;
    job->pinned = (int)pinned;
    char where[160];
    if (!pin_threads) {
        gp_strlcpy(where, "placed by the scheduler", sizeof where);
    } else {
        gp_snprintf(where, sizeof where, "%zu pinned, to CPU", pinned);
        for (size_t i = 0; i < r->nthreads && i < r->norder; i++)
            gp_appendf(where, sizeof where, "%s%d", i ? "," : " ", r->order[i]);
        if (r->nthreads > r->norder)
            gp_appendf(where, sizeof where, " (%zu CPUs for %zu threads)", r->norder,
                       r->nthreads);
    }
    char kernels[320];
    describe_kernels(r, job, kernels, sizeof kernels);
    gp_snprintf(job->method, sizeof job->method,
                "%s; %zu thread%s (%s), each writing its own part of the arrays first",
                kernels, r->nthreads, r->nthreads == 1 ? "" : "s", where);
}

/* Test t's kernel set: one pass of the widest (a warm-up, and the
 * repetitions that make a pass last GP_BW_PASS_S, as the protocol's), then
 * GP_BW_TRIALS passes of every set in turns, the order reversed each time;
 * the set whose best pass was the shortest. */
static void choose_kernels(cpu_bw *r, gpuprobe_bandwidth_test t)
{
    r->use[t] = &r->sets[0];
    command(r, CMD_PASS, t, 1);
    double first = r->t1 - r->t0, best[GP_BW_MAX_SETS];
    for (size_t s = 0; s < GP_BW_MAX_SETS; s++)
        best[s] = HUGE_VAL;
    size_t reps = gp_bw_reps_for(first);
    for (size_t k = 0; k < GP_BW_TRIALS * r->nsets; k++) {
        size_t turn = k / r->nsets, j = k % r->nsets;
        size_t s = turn % 2 ? r->nsets - 1 - j : j;
        r->use[t] = &r->sets[s];
        command(r, CMD_PASS, t, reps);
        double sec = (r->t1 - r->t0) / (double)reps;
        if (sec < best[s])
            best[s] = sec;
    }
    size_t pick = 0;
    double bytes = gp_bw_pass_bytes(t, r->n * sizeof(double), 1);
    for (size_t s = 0; s < r->nsets; s++) {
        r->trial_gbps[t][s] = best[s] > 0 && best[s] < HUGE_VAL ? bytes / best[s] / 1e9 : 0.0;
        if (best[s] < best[pick])
            pick = s;
    }
    r->use[t] = &r->sets[pick];
    r->ran |= GP_BW_BIT(t);
}

static gpuprobe_status cpu_prepare(gpuprobe_context *ctx, void *state, gp_bw_job *job)
{
    cpu_bw *r = state;
    gpuprobe_status st = map_arrays(ctx, r, job->buffer_bytes);
    if (st == GPUPROBE_OK)
        st = start_workers(ctx, r, job->pin);
    if (st != GPUPROBE_OK)
        return st;
    command(r, CMD_INIT, GPUPROBE_BANDWIDTH_TEST_READ, 0);
    r->nsets = gp_bw_kernel_sets(&r->sets);
    for (int t = 0; t < GP_BW_NTESTS; t++) {
        r->use[t] = &r->sets[0];
        if ((job->tests & GP_BW_BIT(t)) && r->nsets > 1 && job->warmup > 0)
            choose_kernels(r, (gpuprobe_bandwidth_test)t);
    }
    describe(r, job, job->pin);
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_pass(gpuprobe_context *ctx, void *state, gpuprobe_bandwidth_test t,
                                size_t reps, double *seconds)
{
    (void)ctx;
    cpu_bw *r = state;
    command(r, CMD_PASS, t, reps);
    r->ran |= GP_BW_BIT(t);
    *seconds = r->t1 - r->t0;
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_finish(gpuprobe_context *ctx, void *state, gp_bw_job *job)
{
    cpu_bw *r = state;
    (void)job;
    if (gp_test_bw_corrupt)
        gp_test_bw_corrupt(r->a, r->b, r->c, r->n);
    command(r, CMD_CHECK, GPUPROBE_BANDWIDTH_TEST_READ, 0);
    size_t bad = 0;
    for (size_t i = 0; i < r->nthreads; i++)
        bad += r->w[i].bad;
    if (bad)
        return gp_fail(ctx, GPUPROBE_ERR_VERIFY_FAILED,
                       "bandwidth on the CPU: %zu array elements (or sums) were not what "
                       "the kernels write", bad);
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_release(gpuprobe_context *ctx, void *state, gpuprobe_status st)
{
    (void)ctx;
    cpu_bw *r = state;
    gp_pool_close(r->pool);
    for (int i = 0; i < 3; i++)
        if (r->map[i])
            munmap(r->map[i], r->map_bytes);
    free(r->w);
    free(r->order);
    free(r);
    return st;
}

const gp_bw_backend gp_cpu_bw_backend = {
    .tests = GP_BW_CPU_TESTS,
    .read_buffers = 1,
    .open = cpu_open,
    .prepare = cpu_prepare,
    .pass = cpu_pass,
    .finish = cpu_finish,
    .release = cpu_release,
};
