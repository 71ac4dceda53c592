/*
 * cpu_matmul.c - the CPU backend of the timed matmul: OpenBLAS
 * cblas_sgemm (fp32) and cblas_dgemm (fp64), row-major, and the library's
 * own bf16 gemm (cpu_bf16.c: AMX tiles or AVX512-BF16) where the CPU has
 * them, behind the
 * table of operations of matmul_backend.h (the protocol is matmul.c's).
 *
 * OpenBLAS's thread count is process-wide: when the options ask for a
 * count, it is set for the runs and the previous value is put back before
 * this function returns, whatever happens. Runs that set a count hold
 * a process-wide lock from the save to the restore, so two contexts that
 * set counts at the same time cannot interleave and leave a count behind
 * (A saves 2, sets 1; B saves A's 1; A restores 2; B restores 1). Runs that
 * leave the count alone take no lock and use whatever is in force.
 *
 * The lock is never held across fork(): pthread_atfork handlers take it
 * before the fork and release it in both processes, so fork() waits for a
 * run in another thread to restore the count, and the child starts with
 * the lock free and the count restored.
 *
 * needs() tells the protocol what OpenBLAS adds to A, B and C (its buffers
 * and threads, gp_openblas_cost()), which it checks against the host's and
 * the process's memory limits before anything is allocated: under an
 * address-space limit OpenBLAS would otherwise spin forever on a buffer it
 * cannot map.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "matmul_backend.h"
#include "cpu_bf16.h"
#include "cpu_blas.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_error;

static void threads_lock_take(void) { pthread_mutex_lock(&threads_lock); }
static void threads_lock_give(void) { pthread_mutex_unlock(&threads_lock); }
static void register_atfork(void)
{
    atfork_error = pthread_atfork(threads_lock_take, threads_lock_give,
                                  threads_lock_give);
}

typedef struct cpu_run {
    const gp_openblas *ob;    /* NULL: bf16 (cpu_bf16.c) */
    gp_bf16_gemm *bf16;
    int dp;                   /* fp64 */
    int m, n, k;
    void *a, *b, *c;
    int set_threads;          /* holds threads_lock, prev_threads to restore */
    int prev_threads;
} cpu_run;

/* The bf16 gemm's threads: the options' count, else one per CPU the
 * process may run on (its affinity, which a cgroup's cpuset narrows). */
static size_t bf16_threads(const gp_mm_job *job)
{
    return job->cpu_threads > 0 ? (size_t)job->cpu_threads : gp_host_allowed_count();
}

static gpuprobe_status bf16_needs(gpuprobe_context *ctx, const gp_mm_job *job,
                                 gp_mm_needs *out)
{
    char why[160];
    if (!gp_cpu_bf16(ctx, why, sizeof why))
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED, "matmul in bf16 on the CPU: %s", why);
    size_t t = gp_bf16_gemm_threads(bf16_threads(job), (size_t)job->m, (size_t)job->n,
                                   (size_t)job->k);
    out->memory = out->address_space = gp_bf16_gemm_cost(t);
    gp_snprintf(out->memory_text, sizeof out->memory_text,
                "the bf16 gemm's packed panels and stacks, %llu bytes",
                (unsigned long long)out->memory);
    gp_snprintf(out->space_text, sizeof out->space_text,
                "the bf16 gemm's packed panels and the stacks of its %zu thread%s, %llu bytes",
                t, t == 1 ? "" : "s", (unsigned long long)out->address_space);
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_needs(gpuprobe_context *ctx, const gp_mm_job *job,
                                 gp_mm_needs *out)
{
    if (job->dtype == GPUPROBE_DTYPE_BF16)
        return bf16_needs(ctx, job, out);
    const gp_openblas *ob = NULL;
    gpuprobe_status st = gp_openblas_get(ctx, &ob);
    if (st != GPUPROBE_OK)
        return st;
    size_t es = job->dtype == GPUPROBE_DTYPE_FP64 ? sizeof(double) : sizeof(float);
    gp_blas_cost cost;
    gp_openblas_cost(ob, job->cpu_threads, job->m, job->n, job->k, es, &cost);
    out->memory = cost.memory;
    out->address_space = cost.address_space;
    gp_snprintf(out->memory_text, sizeof out->memory_text,
                "OpenBLAS's packed panels up to %llu bytes",
                (unsigned long long)cost.memory);
    gp_snprintf(out->space_text, sizeof out->space_text,
                "OpenBLAS %llu bytes: the calling thread's buffer",
                (unsigned long long)cost.address_space);
    if (cost.new_threads > 0)
        gp_appendf(out->space_text, sizeof out->space_text,
                   " and the buffers and stacks of %d new pool thread%s", cost.new_threads,
                   cost.new_threads == 1 ? "" : "s");
    return GPUPROBE_OK;
}

static void cpu_free(cpu_run *r)
{
    gp_bf16_gemm_close(r->bf16);
    free(r->a);
    free(r->b);
    free(r->c);
    free(r);
}

/* A, B and C 64-byte aligned: whole cache lines, as any AVX-512 load
 * wants. A failed posix_memalign leaves its pointer as it was (POSIX),
 * NULL here (r is calloc'ed); the first failure ends the allocation. */
static gpuprobe_status alloc_abc(gpuprobe_context *ctx, const gp_mm_job *job, cpu_run *r)
{
    const size_t ba = job->a_bytes, bb = job->b_bytes, bc = job->c_bytes;
    if (posix_memalign(&r->a, 64, ba) != 0 || posix_memalign(&r->b, 64, bb) != 0 ||
        posix_memalign(&r->c, 64, bc) != 0) {
        cpu_free(r);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating A, B and C (%zu + %zu + %zu bytes)", ba, bb, bc);
    }
    r->m = (int)job->m;
    r->n = (int)job->n;
    r->k = (int)job->k;
    return GPUPROBE_OK;
}

/* bf16: A and B bf16, C fp32, the gemm's threads started. */
static gpuprobe_status bf16_prepare(gpuprobe_context *ctx, gp_mm_job *job, gp_mm_host *host,
                                   void **state)
{
    cpu_run *r = calloc(1, sizeof *r);
    if (!r)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the matmul state");
    gpuprobe_status st = alloc_abc(ctx, job, r);
    if (st != GPUPROBE_OK)
        return st;
    char why[160];
    const int kernel = gp_cpu_bf16(ctx, why, sizeof why); /* needs() found one */
    size_t used = 0;
    st = kernel ? gp_bf16_gemm_open(ctx, kernel, bf16_threads(job), (size_t)job->m,
                                    (size_t)job->n, (size_t)job->k, r->a, r->b, r->c,
                                    &r->bf16, &used)
                : gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED, "matmul in bf16 on the CPU: %s", why);
    if (st != GPUPROBE_OK) {
        cpu_free(r);
        return st;
    }
    *host = (gp_mm_host){r->a, r->b, r->c, GP_ELEM_BF16, GP_ELEM_BF16, GP_ELEM_F32};
    job->threads = (int)used;
    gp_snprintf(job->backend, sizeof job->backend, "libgpuprobe %s gemm",
                gp_bf16_kernel_name(kernel));
    gp_snprintf(job->compute_type, sizeof job->compute_type, "%s (bf16 products, fp32 sums)",
                kernel == GP_BF16_AMX ? "tdpbf16ps" : "vdpbf16ps");
    job->cpu_flops_per_cycle = gp_bf16_flops_per_cycle(kernel);
    *state = r;
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_prepare(gpuprobe_context *ctx, gp_mm_job *job,
                                   gp_mm_host *host, void **state)
{
    if (job->dtype == GPUPROBE_DTYPE_BF16)
        return bf16_prepare(ctx, job, host, state);
    const gp_openblas *ob = NULL;
    gpuprobe_status st = gp_openblas_get(ctx, &ob); /* loaded by needs() */
    if (st != GPUPROBE_OK)
        return st;
    const int set_threads = job->cpu_threads > 0;
    if (set_threads) {
        (void)pthread_once(&atfork_once, register_atfork);
        if (atfork_error)
            return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                           "cannot register the fork handlers of the OpenBLAS "
                           "thread-count lock (pthread_atfork: error %d)",
                           atfork_error);
    }
    const int dp = job->dtype == GPUPROBE_DTYPE_FP64;
    const gp_elem e = dp ? GP_ELEM_F64 : GP_ELEM_F32;
    cpu_run *r = calloc(1, sizeof *r);
    if (!r)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the matmul state");
    st = alloc_abc(ctx, job, r);
    if (st != GPUPROBE_OK)
        return st;
    r->ob = ob;
    r->dp = dp;
    *host = (gp_mm_host){r->a, r->b, r->c, e, e, e};

    r->set_threads = set_threads;
    if (set_threads)
        pthread_mutex_lock(&threads_lock);
    r->prev_threads = ob->get_num_threads();
    if (set_threads)
        ob->set_num_threads((int)job->cpu_threads);
    job->threads = ob->get_num_threads();
    gp_openblas_name(ob, job->backend, sizeof job->backend);
    /* math_mode stays "": the job is zeroed before prepare (matmul.c) */
    gp_strlcpy(job->compute_type, dp ? "cblas_dgemm" : "cblas_sgemm",
               sizeof job->compute_type);
    *state = r;
    return GPUPROBE_OK;
}

/* Between the two clock reads there is nothing but the gemm calls. */
static gpuprobe_status cpu_run_block(gpuprobe_context *ctx, void *state, size_t reps,
                                     double *seconds)
{
    (void)ctx;
    const cpu_run *r = state;
    const gp_openblas *ob = r->ob;
    const int m = r->m, n = r->n, k = r->k;
    double t0 = gp_now();
    if (r->bf16) {
        for (size_t i = 0; i < reps; i++)
            gp_bf16_gemm_run(r->bf16);
    } else if (r->dp) {
        for (size_t i = 0; i < reps; i++)
            ob->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, r->a, k,
                      r->b, n, 0.0, r->c, n);
    } else {
        for (size_t i = 0; i < reps; i++)
            ob->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, r->a, k,
                      r->b, n, 0.0f, r->c, n);
    }
    *seconds = gp_now() - t0;
    return GPUPROBE_OK;
}

static gpuprobe_status cpu_release(gpuprobe_context *ctx, void *state, gpuprobe_status st)
{
    (void)ctx;
    cpu_run *r = state;
    if (r->ob && r->set_threads) {
        r->ob->set_num_threads(r->prev_threads);
        pthread_mutex_unlock(&threads_lock);
    }
    cpu_free(r);
    return st;
}

const gp_mm_backend gp_cpu_backend = {
    .needs = cpu_needs,
    .prepare = cpu_prepare,
    .upload = NULL,
    .run = cpu_run_block,
    .download = NULL,
    .release = cpu_release,
};
