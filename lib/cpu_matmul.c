/*
 * cpu_matmul.c - the CPU backend of the timed matmul: OpenBLAS
 * cblas_sgemm (fp32) and cblas_dgemm (fp64), row-major.
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
 * Before anything is allocated, the run is checked against the host's and
 * the process's memory limits, counting OpenBLAS's buffers and threads
 * (gp_openblas_cost()): under an address-space limit OpenBLAS would
 * otherwise spin forever on a buffer it cannot map.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "matmul_internal.h"
#include "cpu_blas.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* Timed runs: at least min_runs; then more while the budget lasts (time
 * since the first timed run), at most max_runs. Between the two clock
 * reads there is nothing but the gemm call. */
#define GP_TIMED_LOOP(GEMM_CALL)                                              \
    do {                                                                      \
        double budget_ = (double)job->budget_ms / 1000.0;                     \
        size_t min_ = (size_t)job->min_runs, max_ = (size_t)job->max_runs;    \
        double first_ = gp_now(), last_ = first_;                             \
        size_t r_ = 0;                                                        \
        while (r_ < min_ || (r_ < max_ && last_ - first_ < budget_)) {        \
            double t0_ = gp_now();                                             \
            GEMM_CALL;                                                        \
            last_ = gp_now();                                                  \
            job->times[r_++] = last_ - t0_;                                   \
        }                                                                     \
        job->runs = r_;                                                       \
    } while (0)

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

gpuprobe_status gp_cpu_matmul(gpuprobe_context *ctx, gp_mm_job *job)
{
    double setup0 = gp_now();
    const gp_openblas *ob = NULL;
    gpuprobe_status st = gp_openblas_get(ctx, &ob);
    if (st != GPUPROBE_OK)
        return st;
    const int dp = job->dtype == GPUPROBE_DTYPE_FP64;
    const gp_elem e = dp ? GP_ELEM_F64 : GP_ELEM_F32;
    const size_t es = gp_elem_size(e);
    const int m = (int)job->m, n = (int)job->n, k = (int)job->k;
    size_t ba, bb, bc;
    if (gp_mm_bytes(job->m, job->k, es, &ba) || gp_mm_bytes(job->k, job->n, es, &bb) ||
        gp_mm_bytes(job->m, job->n, es, &bc))
        return gp_fail(ctx, GPUPROBE_ERR_OVERFLOW, "matmul buffers overflow size_t");

    gp_blas_cost cost;
    gp_openblas_cost(ob, job->cpu_threads, job->m, job->n, job->k, es, &cost);
    char mtext[96], stext[160];
    gp_snprintf(mtext, sizeof mtext, "OpenBLAS's packed panels up to %llu bytes",
                (unsigned long long)cost.memory);
    int len = snprintf(stext, sizeof stext,
                       "OpenBLAS %llu bytes: the calling thread's buffer",
                       (unsigned long long)cost.address_space);
    if (cost.new_threads > 0 && len > 0 && (size_t)len < sizeof stext)
        gp_snprintf(stext + len, sizeof stext - (size_t)len,
                    " and the buffers and stacks of %d new pool thread%s",
                    cost.new_threads, cost.new_threads == 1 ? "" : "s");
    st = gp_mm_check_host(ctx, job, cost.memory, mtext, cost.address_space, stext);
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

    void *a = NULL, *b = NULL, *c = NULL;
    /* 64-byte alignment: whole cache lines, as any AVX-512 load wants. */
    if (posix_memalign(&a, 64, ba) != 0) a = NULL;
    if (a && posix_memalign(&b, 64, bb) != 0) b = NULL;
    if (b && posix_memalign(&c, 64, bc) != 0) c = NULL;
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating A, B and C (%zu + %zu "
                       "+ %zu bytes)",
                       ba, bb, bc);
    }
    size_t na = ba / es, nb = bb / es, nc = bc / es;
    gp_fill_random(a, e, na, job->seed, 1);
    gp_fill_random(b, e, nb, job->seed, 2);
    /* Poison C: a gemm that writes nothing leaves NaN, which never verifies. */
    if (dp) {
        double *cd = c;
        for (size_t i = 0; i < nc; i++)
            cd[i] = NAN;
    } else {
        float *cf = c;
        for (size_t i = 0; i < nc; i++)
            cf[i] = NAN;
    }

    if (set_threads)
        pthread_mutex_lock(&threads_lock);
    const int prev_threads = ob->get_num_threads();
    if (set_threads)
        ob->set_num_threads((int)job->cpu_threads);
    job->threads = ob->get_num_threads();
    gp_openblas_name(ob, job->backend, sizeof job->backend);
    job->math_mode[0] = '\0';
    gp_strlcpy(job->compute_type, dp ? "cblas_dgemm" : "cblas_sgemm",
               sizeof job->compute_type);

    if (dp) {
        const double *ad = a, *bd = b;
        double *cd = c;
        for (int64_t w = 0; w < job->warmup; w++)
            ob->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                        1.0, ad, k, bd, n, 0.0, cd, n);
        job->setup_s = gp_now() - setup0;
        GP_TIMED_LOOP(ob->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                                  m, n, k, 1.0, ad, k, bd, n, 0.0, cd, n));
    } else {
        const float *af = a, *bf = b;
        float *cf = c;
        for (int64_t w = 0; w < job->warmup; w++)
            ob->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                        1.0f, af, k, bf, n, 0.0f, cf, n);
        job->setup_s = gp_now() - setup0;
        GP_TIMED_LOOP(ob->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                                  m, n, k, 1.0f, af, k, bf, n, 0.0f, cf, n));
    }

    if (set_threads) {
        ob->set_num_threads(prev_threads);
        pthread_mutex_unlock(&threads_lock);
    }

    job->h2d_s = job->d2h_s = 0.0;
    if (job->verify)
        gp_mm_verify(job, a, e, b, e, c, e);
    free(a);
    free(b);
    free(c);
    return GPUPROBE_OK;
}
