/*
 * fault_alloc.c - host allocation failure at every allocation site of a
 * call.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
 * and --wrap=posix_memalign
 * (tests/reliability.cmake): every allocation the library's own objects
 * make goes through the __wrap_* functions below, which
 *  - count the allocations made while "armed" and fail the k-th one;
 *  - keep the set of live blocks they handed out, so that a leak on an
 *    error path shows as a block still live after the context (and every
 *    result) was destroyed.
 *
 * For each scenario (one public call, in a fresh context or object) the
 * call is first run unarmed to count its allocations N; then for
 * k = 1..N it is run again with the k-th allocation failing, and must:
 *  - return GPUPROBE_ERR_OUT_OF_MEMORY with a message (or GPUPROBE_OK when
 *    the allocation was optional and the call degraded gracefully),
 *  - write no output on failure,
 *  - leave the context usable: the same call, unarmed, then succeeds with
 *    the reference answer,
 *  - leak nothing: after tearing down, no block is live that was not live
 *    before,
 *  - leave OpenBLAS's process-wide thread count as it was.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "cpu_blas.h"

#include <dlfcn.h>
#include "../sysroot_util.h"

int openblas_get_num_threads(void);

/* ---- the allocator wrappers ---- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
int __wrap_posix_memalign(void **p, size_t align, size_t size);

static int armed;          /* count (and maybe fail) allocations */
static size_t grown[16];   /* realloc() sizes asked for while recording */
static int n_grown, recording;
static long fail_at;       /* 1-based index of the allocation to fail; 0 none */
static long n_allocs;      /* allocations seen while armed */
static long n_failed;      /* allocations failed while armed */

/* Live blocks handed out by the wrappers: open addressing, linear probing. */
#define SLOTS (1u << 16)
#define TOMB ((void *)1)
static void *live[SLOTS];
static long n_live;

static size_t slot_of(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= UINT64_C(0xed5ad4bb);
    x ^= x >> 11;
    return (size_t)(x & (SLOTS - 1));
}

static void live_add(void *p)
{
    if (!p)
        return;
    size_t i = slot_of(p);
    for (size_t n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
        if (live[i] == NULL || live[i] == TOMB) {
            live[i] = p;
            n_live++;
            return;
        }
    }
    fprintf(stderr, "fault_alloc: live-block table full\n");
    abort();
}

static int live_del(void *p)
{
    size_t i = slot_of(p);
    for (size_t n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
        if (live[i] == NULL)
            return 0;
        if (live[i] == p) {
            live[i] = TOMB;
            n_live--;
            return 1;
        }
    }
    return 0;
}

/* 1 when this allocation must fail. */
static int should_fail(void)
{
    if (!armed)
        return 0;
    n_allocs++;
    if (fail_at > 0 && n_allocs == fail_at) {
        n_failed++;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    void *p = __real_malloc(size);
    live_add(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = __real_calloc(n, size);
    live_add(p);
    return p;
}

void *__wrap_realloc(void *p, size_t size)
{
    if (p && size == 0) {
        live_del(p);
        return __real_realloc(p, 0);
    }
    if (recording && n_grown < 16)
        grown[n_grown++] = size;
    if (should_fail())
        return NULL; /* p stays valid, as after a real failure */
    void *q = __real_realloc(p, size);
    if (q) {
        if (p)
            live_del(p);
        live_add(q);
    }
    return q;
}

/* As posix_memalign() fails: ENOMEM, *p untouched. */
int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
    if (should_fail())
        return ENOMEM;
    int rc = __real_posix_memalign(p, align, size);
    if (rc == 0)
        live_add(*p);
    return rc;
}

void __wrap_free(void *p)
{
    if (p)
        live_del(p); /* blocks from libc's own allocations are not listed */
    __real_free(p);
}

static void arm(long k)
{
    n_allocs = 0;
    n_failed = 0;
    fail_at = k;
    armed = 1;
}

static void disarm(void) { armed = 0; }

/* ---- scenarios ---- */

#define GiB (UINT64_C(1) << 30)
static const gp_fake_cuda_device fake_devs[] = {
    {"Fake A", 8, 0, 40 * GiB, 30 * GiB, 0},
    {"Fake B", 9, 0, 80 * GiB, 70 * GiB, 600u << 20},
};
static const gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, "fake", 2, fake_devs};

typedef struct env {
    gpuprobe_context *ctx;       /* set up unarmed, unless the call creates it */
    gpuprobe_matmul_options *opts;
    gpuprobe_matmul_result *result;
    gpuprobe_plan_options *plan_opts;
    int use_fake;
    /* answers of the call */
    size_t count, device;
    uint64_t u64;
    int64_t i64;
    char text[GP_ERR_LEN];
} env;

typedef struct scenario {
    const char *name;
    int needs_ctx;
    int use_fake;         /* 1: the test seam's CUDA devices; 2: the cgroup sysroot;
                             3: the simulated NVIDIA stack, loaded beforehand */
    gpuprobe_status (*call)(env *e);
    /* Compare e's answer with the reference; 0 if equal. */
    int (*same)(const env *a, const env *b);
} scenario;

static int same_none(const env *a, const env *b) { (void)a; (void)b; return 0; }
static int same_count(const env *a, const env *b) { return a->count != b->count; }
static int same_device(const env *a, const env *b) { return a->device != b->device; }
static int same_u64(const env *a, const env *b) { return a->u64 != b->u64; }
static int same_i64(const env *a, const env *b) { return a->i64 != b->i64; }
static int same_text(const env *a, const env *b) { return strcmp(a->text, b->text); }

static gpuprobe_status do_create(env *e)
{
    gpuprobe_context *c = (gpuprobe_context *)&e;
    gpuprobe_status st = gpuprobe_context_create(&c, 0);
    if (st != GPUPROBE_OK) {
        if (c != NULL)
            fail_msg("context_create failed but did not set *out to NULL");
        return st;
    }
    if (c == NULL)
        fail_msg("context_create returned OK without a context");
    e->ctx = c;
    return st;
}

static gpuprobe_status do_count(env *e)
{
    size_t n = 12345;
    gpuprobe_status st = gpuprobe_device_count(e->ctx, &n);
    if (st == GPUPROBE_OK)
        e->count = n;
    else if (n != 12345)
        fail_msg("device_count wrote its output on failure");
    return st;
}

static gpuprobe_status do_cuda_status(env *e)
{
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)77;
    const char *detail = NULL;
    gpuprobe_status st = gpuprobe_cuda_status(e->ctx, &cause, &detail);
    if (st == GPUPROBE_OK) {
        e->i64 = cause;
        if (!detail)
            fail_msg("cuda_status gave no detail");
    }
    return st;
}

static gpuprobe_status do_name(env *e)
{
    const char *s = NULL;
    gpuprobe_status st =
        gpuprobe_device_get_string(e->ctx, 0, GPUPROBE_ATTR_NAME, &s);
    if (st == GPUPROBE_OK)
        gp_strlcpy(e->text, s, sizeof e->text);
    return st;
}

static gpuprobe_status do_cuda_name(env *e)
{
    const char *s = NULL;
    gpuprobe_status st =
        gpuprobe_device_get_string(e->ctx, 2, GPUPROBE_ATTR_NAME, &s);
    if (st == GPUPROBE_OK)
        gp_strlcpy(e->text, s, sizeof e->text);
    return st;
}

static gpuprobe_status do_memory(env *e)
{
    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_status st = gpuprobe_device_memory(e->ctx, 0, &mi, 0);
    if (st == GPUPROBE_OK)
        e->u64 = mi.physical_bytes; /* stable; available_bytes moves */
    return st;
}

/* Host memory under a cgroup v2 limit (the fake tree of cgroup_root):
 * the limited total must survive, or the call fail. */
static gpuprobe_status do_memory_cgroup(env *e)
{
    gpuprobe_memory_info mi = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_status st = gpuprobe_device_memory(e->ctx, 0, &mi, 0);
    if (st == GPUPROBE_OK)
        e->u64 = mi.total_bytes;
    return st;
}

static char cgroup_root[] = "/tmp/gpuprobe-fault-XXXXXX";

static void make_cgroup_root(void)
{
    if (!mkdtemp(cgroup_root))
        fail_msg("mkdtemp failed");
    sr_put(cgroup_root, "proc/meminfo", "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n");
    sr_put(cgroup_root, "proc/self/status", "VmSize: 100000 kB\nVmData: 50000 kB\n");
    sr_put(cgroup_root, "proc/self/cgroup", "0::/app.slice/job.scope\n");
    sr_put(cgroup_root, "sys/fs/cgroup/app.slice/job.scope/memory.max", "4294967296\n");
    sr_put(cgroup_root, "sys/fs/cgroup/app.slice/job.scope/memory.current", "1073741824\n");
    sr_put(cgroup_root, "sys/fs/cgroup/app.slice/job.scope/memory.stat", "inactive_file 0\n");
}

/* The fewest GPUs for a model of 20e9 fp16 parameters (40 GB of weights
 * plus inference's overheads: more than one of the seam's GPUs). */
static gpuprobe_status do_plan_gpus(env *e)
{
    /* The model is made unarmed (it has no context to say why it failed);
     * the count goes on where it was. */
    gpuprobe_model *m = NULL;
    int was_armed = armed;
    long k = fail_at, seen = n_allocs;
    disarm();
    assert_int_equal(gpuprobe_model_create(&m), GPUPROBE_OK);
    assert_int_equal(gpuprobe_model_set(m, GPUPROBE_MODEL_PARAMS, 20000000000), GPUPROBE_OK);
    armed = was_armed;
    fail_at = k;
    n_allocs = seen;
    size_t count = 999, devs[4];
    gpuprobe_status st = gpuprobe_plan_gpus(e->ctx, m, NULL, 0, &count, devs, 4);
    disarm();
    gpuprobe_model_destroy(m);
    armed = was_armed;
    if (st == GPUPROBE_OK)
        e->count = count;
    else if (count != 999)
        fail_msg("plan_gpus wrote its output on failure");
    return st;
}

static gpuprobe_status do_capacity(env *e)
{
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    gpuprobe_status st = gpuprobe_device_capacity(
        e->ctx, 2, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_INFERENCE, 0, &cap);
    if (st == GPUPROBE_OK)
        e->u64 = cap.max_params;
    return st;
}

static gpuprobe_status do_select(env *e)
{
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    req.fit_params = 7000000000;
    req.min_cc_major = 8;
    size_t d = 777;
    const char *reason = NULL;
    gpuprobe_status st = gpuprobe_select(e->ctx, "auto", &req,
                                         GPUPROBE_SELECT_IGNORE_ENV, &d, &reason);
    if (st == GPUPROBE_OK)
        e->device = d;
    else if (d != 777)
        fail_msg("select wrote its output on failure");
    return st;
}

static gpuprobe_status do_select_env(env *e)
{
    size_t d = 777;
    gpuprobe_status st = gpuprobe_select(e->ctx, "cuda:1", NULL, 0, &d, NULL);
    if (st == GPUPROBE_OK)
        e->device = d;
    return st;
}

static gpuprobe_status do_options(env *e)
{
    gpuprobe_matmul_options *o = (gpuprobe_matmul_options *)&e;
    gpuprobe_status st = gpuprobe_matmul_options_create(&o);
    if (st != GPUPROBE_OK) {
        if (o != NULL)
            fail_msg("options_create failed but did not set *out to NULL");
        return st;
    }
    if (o == NULL)
        fail_msg("matmul_options_create returned OK without an object");
    e->opts = o;
    return st;
}

static gpuprobe_status do_plan_options(env *e)
{
    gpuprobe_plan_options *o = (gpuprobe_plan_options *)&e;
    gpuprobe_status st = gpuprobe_plan_options_create(&o);
    if (st != GPUPROBE_OK) {
        if (o != NULL)
            fail_msg("plan_options_create failed but did not set *out to NULL");
        return st;
    }
    if (o == NULL)
        fail_msg("plan_options_create returned OK without an object");
    e->plan_opts = o;
    return st;
}

/* A matmul on a device: two runs of one call; or, with budget_ms, runs of
 * one call until that many milliseconds are timed, with no cap on their
 * number (the run times then grow past their first 128: checked). */
static gpuprobe_status matmul_runs(env *e, size_t device, int dtype, int threads,
                                   int64_t budget_ms)
{
    gpuprobe_matmul_options *o = NULL;
    int was_armed = armed;
    disarm();
    long k = fail_at, seen = n_allocs;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 40);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_N, 24);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, budget_ms ? 1 : 2);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, budget_ms ? 0 : 2);
    if (budget_ms) {
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BATCH, 1);
        gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_BUDGET_MS, budget_ms);
    }
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dtype);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, threads);
    /* Re-arm (when armed), continuing the count. */
    armed = was_armed;
    fail_at = k;
    n_allocs = seen;
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&o;
    gpuprobe_status st = gpuprobe_matmul_run(e->ctx, device, o, 0, &r);
    disarm();
    gpuprobe_matmul_options_destroy(o);
    if (st == GPUPROBE_OK) {
        int64_t v = -1;
        assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_VERIFIED, &v),
                         GPUPROBE_OK);
        if (v != 1)
            fail_msg("matmul not verified after surviving a failed allocation");
        int64_t runs = 0;
        assert_int_equal(gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_RUNS, &runs),
                         GPUPROBE_OK);
        if (budget_ms && runs <= 128)
            fail_msg("%lld runs in %lld ms: the run times never grew", (long long)runs,
                     (long long)budget_ms);
        e->i64 = v;
        gpuprobe_matmul_result_destroy(r);
    } else if (r != NULL) {
        fail_msg("matmul failed with %s but *out is not NULL",
                 gpuprobe_status_name(st));
    }
    armed = was_armed;
    return st;
}

static gpuprobe_status matmul_on(env *e, size_t device, int dtype, int threads)
{
    return matmul_runs(e, device, dtype, threads, 0);
}

static gpuprobe_status matmul(env *e, int dtype, int threads)
{
    return matmul_on(e, 0, dtype, threads);
}

static gpuprobe_status do_matmul_fp32(env *e) { return matmul(e, GPUPROBE_DTYPE_FP32, 0); }
/* Device 1: the first GPU of the simulated stack. */
static gpuprobe_status do_matmul_cuda(env *e) { return matmul_on(e, 1, GPUPROBE_DTYPE_FP32, 0); }
/* The simulated clock is exact: a call of about 5 us, so 1 ms of them is
 * some 200 runs. */
static gpuprobe_status do_matmul_cuda_budget(env *e)
{
    return matmul_runs(e, 1, GPUPROBE_DTYPE_FP32, 0, 1);
}
static gpuprobe_status do_matmul_fp64_2t(env *e) { return matmul(e, GPUPROBE_DTYPE_FP64, 2); }

static gpuprobe_status do_bandwidth_options(env *e)
{
    (void)e;
    gpuprobe_bandwidth_options *o = (gpuprobe_bandwidth_options *)&e;
    gpuprobe_status st = gpuprobe_bandwidth_options_create(&o);
    if (st != GPUPROBE_OK && o != NULL)
        fail_msg("bandwidth_options_create failed but did not set *out to NULL");
    gpuprobe_bandwidth_options_destroy(o);
    return st;
}

/* A small bandwidth run (64 KiB buffers, one pass) on device; the answer
 * is the number of tests measured. */
static gpuprobe_status bandwidth_on(env *e, size_t device)
{
    gpuprobe_bandwidth_options *o = NULL;
    int was_armed = armed;
    disarm();
    long k = fail_at, seen = n_allocs;
    assert_int_equal(gpuprobe_bandwidth_options_create(&o), GPUPROBE_OK);
    gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, 65536);
    gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_RUNS, 1);
    armed = was_armed;
    fail_at = k;
    n_allocs = seen;
    gpuprobe_bandwidth_result *r = (gpuprobe_bandwidth_result *)&o;
    gpuprobe_status st = gpuprobe_bandwidth_run(e->ctx, device, o, 0, &r);
    disarm();
    gpuprobe_bandwidth_options_destroy(o);
    if (st == GPUPROBE_OK) {
        e->i64 = 0;
        for (int t = 0; t < 7; t++) {
            double v;
            e->i64 += gpuprobe_bandwidth_result_test(r, t, GPUPROBE_BANDWIDTH_BYTES, &v) == GPUPROBE_OK;
        }
        gpuprobe_bandwidth_result_destroy(r);
    } else if (r != NULL) {
        fail_msg("bandwidth failed with %s but *out is not NULL", gpuprobe_status_name(st));
    }
    armed = was_armed;
    return st;
}

static gpuprobe_status do_bandwidth_cpu(env *e) { return bandwidth_on(e, 0); }
static gpuprobe_status do_bandwidth_cuda(env *e) { return bandwidth_on(e, 1); }

static const scenario scenarios[] = {
    {"context_create", 0, 0, do_create, same_none},
    {"device_count", 1, 0, do_count, same_count},
    {"device_count_fake", 1, 1, do_count, same_count},
    {"cuda_status", 1, 0, do_cuda_status, same_i64},
    {"device_name_cpu", 1, 0, do_name, same_text},
    {"device_name_fake_cuda", 1, 1, do_cuda_name, same_text},
    {"device_memory_cpu", 1, 0, do_memory, same_u64},
    {"device_memory_cgroup", 1, 2, do_memory_cgroup, same_u64},
    {"device_capacity_fake", 1, 1, do_capacity, same_u64},
    {"plan_gpus_fake", 1, 1, do_plan_gpus, same_count},
    {"select_requirements", 1, 1, do_select, same_device},
    {"select_env", 1, 1, do_select_env, same_device},
    {"matmul_options_create", 0, 0, do_options, same_none},
    {"plan_options_create", 0, 0, do_plan_options, same_none},
    {"matmul_cpu_fp32", 1, 0, do_matmul_fp32, same_i64},
    {"matmul_cpu_fp64_threads", 1, 0, do_matmul_fp64_2t, same_i64},
    {"bandwidth_options_create", 0, 0, do_bandwidth_options, same_none},
    {"bandwidth_cpu", 1, 0, do_bandwidth_cpu, same_i64},
};
#define N_SCEN (sizeof scenarios / sizeof scenarios[0])

/* Run as "fault_alloc cuda" with the simulated NVIDIA stack on the
 * loader's path (tests/simcuda.cmake): a GPU matmul's and a GPU bandwidth
 * run's own host allocations (the cuBLAS state of the context, the
 * device's record and event pool, the run's state, the pageable buffer;
 * with a budget and no cap on the runs, the times' growth), each failing
 * in turn, and everything of it freed at destroy. */
static const scenario cuda_scenarios[] = {
    {"matmul_cuda_fp32", 1, 3, do_matmul_cuda, same_i64},
    {"matmul_cuda_runs_grow", 1, 3, do_matmul_cuda_budget, same_i64},
    {"bandwidth_cuda", 1, 3, do_bandwidth_cuda, same_i64},
};

static void setup_env(const scenario *s, env *e)
{
    memset(e, 0, sizeof *e);
    if (s->needs_ctx) {
        assert_int_equal(gpuprobe_context_create(&e->ctx, 0), GPUPROBE_OK);
        if (s->use_fake == 1)
            gp_test_set_cuda(e->ctx, &fake);
        else if (s->use_fake == 2)
            gp_test_set_sysroot(e->ctx, cgroup_root);
        else if (s->use_fake == 3) {
            /* CUDA is loaded (and its devices listed) before the call. */
            size_t n = 0;
            assert_int_equal(gpuprobe_device_count(e->ctx, &n), GPUPROBE_OK);
            gpuprobe_cuda_cause cause;
            assert_int_equal(gpuprobe_cuda_status(e->ctx, &cause, NULL), GPUPROBE_OK);
            if (cause != GPUPROBE_CUDA_AVAILABLE || n < 2)
                fail_msg("the simulated GPU is not there (cause %s, %zu device(s))",
                         gpuprobe_cuda_cause_name(cause), n);
        }
    }
}

static void teardown_env(env *e)
{
    gpuprobe_matmul_result_destroy(e->result);
    gpuprobe_matmul_options_destroy(e->opts);
    gpuprobe_plan_options_destroy(e->plan_opts);
    gpuprobe_context_destroy(e->ctx);
    memset(e, 0, sizeof *e);
}

static void run_scenario(void **state)
{
    const scenario *s = *state;
    int blas = openblas_get_num_threads();
    if (strcmp(s->name, "select_env") == 0)
        setenv("GPUPROBE_DEVICE", "cuda:0", 1);

    /* Reference run, unarmed except for counting. */
    env ref;
    setup_env(s, &ref);
    arm(0);
    gpuprobe_status st = s->call(&ref);
    disarm();
    long n = n_allocs;
    if (st != GPUPROBE_OK)
        fail_msg("%s: reference run failed: %s (%s)", s->name,
                 gpuprobe_status_name(st), gpuprobe_last_error(ref.ctx));
    env refcopy = ref;
    teardown_env(&ref);
    long baseline = n_live;
    print_message("%s: %ld allocation(s) in the call\n", s->name, n);

    for (long k = 1; k <= n; k++) {
        env e;
        setup_env(s, &e);
        arm(k);
        st = s->call(&e);
        disarm();
        if (n_failed != 1)
            fail_msg("%s: allocation %ld of %ld was never reached (the call "
                     "allocates differently from run to run?)",
                     s->name, k, n);
        if (st == GPUPROBE_ERR_OUT_OF_MEMORY) {
            if (e.ctx && gpuprobe_last_error(e.ctx)[0] == '\0')
                fail_msg("%s: allocation %ld failed: OUT_OF_MEMORY without a "
                         "message", s->name, k);
        } else if (st != GPUPROBE_OK) {
            fail_msg("%s: allocation %ld failed: %s (%s), expected "
                     "out_of_memory", s->name, k, gpuprobe_status_name(st),
                     e.ctx ? gpuprobe_last_error(e.ctx) : "");
        }
        if (openblas_get_num_threads() != blas)
            fail_msg("%s: allocation %ld failed: OpenBLAS thread count changed "
                     "from %d to %d", s->name, k, blas, openblas_get_num_threads());
        /* The object is still usable: the same call now succeeds with the
         * reference answer. */
        if (st != GPUPROBE_OK && e.ctx && s->needs_ctx) {
            gpuprobe_status st2 = s->call(&e);
            if (st2 != GPUPROBE_OK)
                fail_msg("%s: after allocation %ld failed, the retry gave %s (%s)",
                         s->name, k, gpuprobe_status_name(st2),
                         gpuprobe_last_error(e.ctx));
            if (s->same(&e, &refcopy))
                fail_msg("%s: after allocation %ld failed, the retry gave a "
                         "different answer", s->name, k);
        } else if (st == GPUPROBE_OK && s->same(&e, &refcopy)) {
            fail_msg("%s: allocation %ld failed, the call succeeded with a "
                     "different answer", s->name, k);
        }
        teardown_env(&e);
        if (n_live != baseline)
            fail_msg("%s: allocation %ld failed: %ld block(s) leaked", s->name,
                     k, n_live - baseline);
    }
    unsetenv("GPUPROBE_DEVICE");
}

/* ---- how a whole-file read grows its buffer ---- */

/* gp_read_text() of a file of `len` bytes under the bound max: the sizes
 * it asks realloc() for, compared with want (0-terminated). */
static void read_grows(size_t len, size_t max, int rc, const size_t *want)
{
    char *body = __real_malloc(len + 1);
    assert_non_null(body);
    for (size_t i = 0; i < len; i++)
        body[i] = (char)('a' + i % 26);
    body[len] = '\0';
    sr_put(cgroup_root, "grow", body);
    n_grown = 0;
    recording = 1;
    char *text = NULL;
    long live = n_live;
    int r = gp_read_text(cgroup_root, "/grow", max, &text);
    recording = 0;
    assert_int_equal(r, rc);
    if (r == 0)
        assert_string_equal(text, body);
    else if (n_live != live) /* a file over the bound: its buffer freed */
        fail_msg("file of %zu bytes, bound %zu: %ld block(s) left", len, max, n_live - live);
    free(text);
    __real_free(body);
    int n = 0;
    while (want[n])
        n++;
    for (int i = 0; i < n && i < n_grown; i++)
        if (grown[i] != want[i])
            fail_msg("file of %zu bytes, bound %zu: realloc %d asked for %zu bytes, "
                     "not %zu", len, max, i + 1, grown[i], want[i]);
    assert_int_equal(n_grown, n);
}

/* The first read takes 4 KiB (the bound, when smaller); each further one
 * doubles the buffer, up to the bound; one byte more holds the NUL. */
static void read_text_growth(void **state)
{
    (void)state;
    read_grows(100, 1 << 20, 0, (const size_t[]){4097, 0});
    read_grows(5000, 1 << 20, 0, (const size_t[]){4097, 8193, 0});
    read_grows(100, 50, -1, (const size_t[]){51, 0});
    read_grows(4097, 4097, 0, (const size_t[]){4097, 4098, 0});
    read_grows(4096, 4096, 0, (const size_t[]){4097, 0});
    /* at exactly half the bound the buffer still doubles */
    read_grows(8193, 8193, 0, (const size_t[]){4097, 8193, 8194, 0});
    read_grows(8194, 8193, -1, (const size_t[]){4097, 8193, 8194, 0});
    read_grows(9000, 9000, 0, (const size_t[]){4097, 8193, 9001, 0});
}

/* The objects made without a context (a model, options): out of memory is
 * said by the status alone, and *out is NULL. */
static void objects_out_of_memory(void **state)
{
    (void)state;
    gpuprobe_model *m = (gpuprobe_model *)&m;
    arm(1);
    gpuprobe_status st = gpuprobe_model_create(&m);
    disarm();
    assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(m);
    assert_int_equal(n_failed, 1);
    gpuprobe_matmul_options *o = (gpuprobe_matmul_options *)&o;
    arm(1);
    st = gpuprobe_matmul_options_create(&o);
    disarm();
    assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(o);
    gpuprobe_plan_options *p = (gpuprobe_plan_options *)&p;
    arm(1);
    st = gpuprobe_plan_options_create(&p);
    disarm();
    assert_int_equal(st, GPUPROBE_ERR_OUT_OF_MEMORY);
    assert_null(p);
}

/* ---- loading OpenBLAS when host memory runs out ---- */

/* OpenBLAS is never already in the process: each load is checked. */
static void *not_loaded_dlopen(const char *file, int mode)
{
    if (strcmp(file, GP_OPENBLAS_SONAME) == 0 && (mode & RTLD_NOLOAD))
        return NULL;
    return dlopen(file, mode);
}

/* Every allocation of a new load (its record, the reads of the host's
 * memory and limits that check it) failing in turn: the load is refused
 * as out of memory, never made unchecked, and nothing leaks; the next
 * try loads. */
static void openblas_load_out_of_memory(void **state)
{
    (void)state;
    gp_test_dlopen = not_loaded_dlopen;
    gpuprobe_context *ctx = NULL;
    const gp_openblas *ob = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    arm(0);
    gpuprobe_status st = gp_openblas_get(ctx, &ob);
    disarm();
    long n = n_allocs;
    assert_int_equal(st, GPUPROBE_OK);
    gpuprobe_context_destroy(ctx);
    assert_true(n >= 2);
    long baseline = n_live;
    for (long k = 1; k <= n; k++) {
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        arm(k);
        st = gp_openblas_get(ctx, &ob);
        disarm();
        assert_int_equal(n_failed, 1);
        if (st != GPUPROBE_ERR_OUT_OF_MEMORY)
            fail_msg("allocation %ld of %ld failed: %s (%s), not out_of_memory", k, n,
                     gpuprobe_status_name(st), gpuprobe_last_error(ctx));
        assert_null(ctx->openblas);
        assert_int_equal(gp_openblas_get(ctx, &ob), GPUPROBE_OK);
        gpuprobe_context_destroy(ctx);
        if (n_live != baseline)
            fail_msg("allocation %ld failed: %ld block(s) leaked", k, n_live - baseline);
    }
    gp_test_dlopen = NULL;
}

/* The device list failing to allocate: the message counts the records,
 * the CPU's and one a CUDA device. */
static void enumeration_message(void **state)
{
    (void)state;
    int seen = 0;
    for (long k = 1;; k++) {
        gpuprobe_context *ctx = NULL;
        assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
        gp_test_set_cuda(ctx, &fake);
        size_t n = 0;
        arm(k);
        gpuprobe_status st = gpuprobe_device_count(ctx, &n);
        disarm();
        long reached = n_failed;
        const char *msg = gpuprobe_last_error(ctx);
        if (st == GPUPROBE_ERR_OUT_OF_MEMORY && strstr(msg, "device records")) {
            assert_string_equal(msg, "out of memory allocating 3 device records");
            seen = 1;
        }
        gpuprobe_context_destroy(ctx);
        if (!reached)
            break;
    }
    assert_true(seen);
}

/* The host-memory read of a matmul's pre-check running out of memory is
 * no "unknown, go ahead": the run fails, saying so. */
static void matmul_host_read(void **state)
{
    (void)state;
    int seen = 0;
    for (long k = 1;; k++) {
        env e;
        memset(&e, 0, sizeof e);
        assert_int_equal(gpuprobe_context_create(&e.ctx, 0), GPUPROBE_OK);
        arm(k);
        gpuprobe_status st = do_matmul_fp32(&e);
        disarm();
        long reached = n_failed;
        if (st == GPUPROBE_ERR_OUT_OF_MEMORY &&
            strcmp(gpuprobe_last_error(e.ctx), "out of host memory reading /proc/meminfo") == 0)
            seen = 1;
        teardown_env(&e);
        if (!reached)
            break;
    }
    assert_true(seen);
}

int main(int argc, char **argv)
{
    unsetenv("GPUPROBE_DEVICE");
    unsetenv("GPUPROBE_CUDA");
    unsetenv("GPUPROBE_CUDA_LIBDIR");
    make_cgroup_root();
    if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
        const size_t nc = sizeof cuda_scenarios / sizeof cuda_scenarios[0];
        struct CMUnitTest t[sizeof cuda_scenarios / sizeof cuda_scenarios[0]];
        for (size_t i = 0; i < nc; i++) {
            t[i] = (struct CMUnitTest)cmocka_unit_test_prestate(run_scenario,
                                                                (void *)&cuda_scenarios[i]);
            t[i].name = cuda_scenarios[i].name;
        }
        int rc = _cmocka_run_group_tests("fault_alloc_cuda", t, nc, NULL, NULL);
        sr_rm_tree(cgroup_root);
        return rc;
    }
    struct CMUnitTest tests[N_SCEN];
    for (size_t i = 0; i < N_SCEN; i++) {
        struct CMUnitTest t =
            cmocka_unit_test_prestate(run_scenario, (void *)&scenarios[i]);
        t.name = scenarios[i].name;
        tests[i] = t;
    }
    int rc = _cmocka_run_group_tests("fault_alloc", tests, N_SCEN, NULL, NULL);
    const struct CMUnitTest reads[] = {cmocka_unit_test(read_text_growth),
                                       cmocka_unit_test(objects_out_of_memory),
                                       cmocka_unit_test(openblas_load_out_of_memory)};
    rc |= cmocka_run_group_tests_name("fault_alloc_reads", reads, NULL, NULL);
    const struct CMUnitTest messages[] = {
        cmocka_unit_test(enumeration_message),
        cmocka_unit_test(matmul_host_read),
    };
    rc |= cmocka_run_group_tests_name("fault_alloc_messages", messages, NULL, NULL);
    sr_rm_tree(cgroup_root);
    return rc;
}
