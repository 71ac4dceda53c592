/*
 * atfork_fail.c - a CPU matmul that sets OpenBLAS's thread count when the
 * fork handlers of its lock cannot be registered.
 *
 * Such a run holds a process-wide lock that pthread_atfork handlers keep
 * from being inherited locked by a child (lib/cpu_matmul.c). Linked with
 * -Wl,--wrap=pthread_atfork (tests/reliability.cmake), the library's
 * registration fails here with ENOMEM, as glibc's does when it cannot
 * allocate the handlers. Then every run that asks for a thread count is
 * refused as out of memory with the cause named, no result written and
 * OpenBLAS's count untouched (the registration is tried once per process,
 * so the second call fails the same way), while a run that leaves the
 * count alone needs no lock and succeeds.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gpuprobe.h>

int openblas_get_num_threads(void);
int __wrap_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

static int registrations;

int __wrap_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)prepare, (void)parent, (void)child;
    registrations++;
    return ENOMEM;
}

static int run(gpuprobe_context *ctx, int threads, gpuprobe_status want)
{
    gpuprobe_matmul_options *o = NULL;
    if (gpuprobe_matmul_options_create(&o) != GPUPROBE_OK)
        return 1;
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 32);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, threads);
    gpuprobe_matmul_result *r = (gpuprobe_matmul_result *)&o; /* must be cleared */
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    gpuprobe_matmul_options_destroy(o);
    int bad = st != want || (st != GPUPROBE_OK) != (r == NULL);
    if (bad)
        fprintf(stderr, "atfork_fail: CPU_THREADS=%d: %s (%s), want %s\n", threads,
                gpuprobe_status_name(st), gpuprobe_last_error(ctx),
                gpuprobe_status_name(want));
    if (st == GPUPROBE_OK)
        gpuprobe_matmul_result_destroy(r);
    return bad;
}

int main(void)
{
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return 1;
    int before = openblas_get_num_threads(), fails = 0;
    for (int i = 0; i < 2; i++) {
        fails += run(ctx, 1, GPUPROBE_ERR_OUT_OF_MEMORY);
        if (!strstr(gpuprobe_last_error(ctx), "pthread_atfork: error 12")) {
            fprintf(stderr, "atfork_fail: the cause is not named: %s\n",
                    gpuprobe_last_error(ctx));
            fails++;
        }
    }
    fails += run(ctx, 0, GPUPROBE_OK);
    if (registrations != 1) {
        fprintf(stderr, "atfork_fail: %d registrations tried, want 1\n", registrations);
        fails++;
    }
    if (openblas_get_num_threads() != before) {
        fprintf(stderr, "atfork_fail: OpenBLAS's count changed: %d, was %d\n",
                openblas_get_num_threads(), before);
        fails++;
    }
    gpuprobe_context_destroy(ctx);
    printf("atfork_fail: %s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
