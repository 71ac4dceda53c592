/*
 * pool.c - worker threads that each run one function, all together, each
 * time they are told to: the threads of the CPU bandwidth kernels and of
 * the bf16 gemm (cpu_bf16.c). A run bumps a generation count under the
 * mutex and broadcasts it; each worker calls the function on its own
 * argument and counts itself done; the caller, after running a share of
 * its own if it has one, waits until all have. The mutex orders
 * everything the caller wrote before the run before what the workers
 * read, and what they wrote before what the caller reads after it.
 * Floor 2 (the host's threads): calls only the helpers.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int (*gp_test_pool_start)(size_t index);

typedef struct pool_slot {
    struct gp_pool *pool;
    size_t index;
    pthread_t tid;
} pool_slot;

struct gp_pool {
    gp_pool_fn fn;
    char *args;
    size_t stride;
    size_t workers, started;
    pool_slot *slot;
    pthread_mutex_t mu;
    pthread_cond_t go_cv, done_cv;
    unsigned long gen;
    int stop;
    size_t done;
};

static void *worker_main(void *arg)
{
    pool_slot *s = arg;
    gp_pool *p = s->pool;
    void *mine = p->args + s->index * p->stride;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->stop)
            pthread_cond_wait(&p->go_cv, &p->mu);
        int stop = p->stop;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return NULL;
        p->fn(mine);
        pthread_mutex_lock(&p->mu);
        if (++p->done == p->started)
            pthread_cond_signal(&p->done_cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static int start(gp_pool *p, size_t i, const pthread_attr_t *attr)
{
    if (gp_test_pool_start) {
        int e = gp_test_pool_start(i);
        if (e != 0)
            return e;
    }
    return pthread_create(&p->slot[i].tid, attr, worker_main, &p->slot[i]);
}

gpuprobe_status gp_pool_open(gpuprobe_context *ctx, const char *what, gp_pool_fn fn,
                             void *args, size_t stride, size_t workers, size_t stack,
                             int caller_too, gp_pool **out)
{
    *out = NULL;
    gp_pool *p = calloc(1, sizeof *p);
    if (!p)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating the %s threads", what);
    p->fn = fn;
    p->args = args;
    p->stride = stride;
    p->workers = workers;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (workers > 0 && !(p->slot = calloc(workers, sizeof *p->slot))) {
        gp_pool_close(p);
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "allocating %zu %s threads", workers,
                       what);
    }
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        gp_pool_close(p);
        return gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "pthread_attr_init failed");
    }
    (void)pthread_attr_setstacksize(&attr, stack);
    int e = 0;
    for (size_t i = 0; i < workers && e == 0; i++) {
        p->slot[i].pool = p;
        p->slot[i].index = i;
        e = start(p, i, &attr);
        if (e == 0)
            p->started++;
    }
    pthread_attr_destroy(&attr);
    if (e != 0) {
        size_t failed = p->started + 1 + (caller_too != 0);
        gp_pool_close(p);
        return gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "starting %s thread %zu of %zu: "
                       "pthread_create failed: %s", what, failed,
                       workers + (caller_too != 0), strerror(e));
    }
    *out = p;
    return GPUPROBE_OK;
}

void gp_pool_run(gp_pool *p, gp_pool_fn own, void *own_arg)
{
    if (p && p->started > 0) {
        pthread_mutex_lock(&p->mu);
        p->done = 0;
        p->gen++;
        pthread_cond_broadcast(&p->go_cv);
        pthread_mutex_unlock(&p->mu);
    }
    if (own)
        own(own_arg);
    if (p && p->started > 0) {
        pthread_mutex_lock(&p->mu);
        while (p->done < p->started)
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

void gp_pool_close(gp_pool *p)
{
    if (!p)
        return;
    if (p->started > 0) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->go_cv);
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < p->started; i++)
            pthread_join(p->slot[i].tid, NULL);
    }
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->go_cv);
    pthread_mutex_destroy(&p->mu);
    free(p->slot);
    free(p);
}
