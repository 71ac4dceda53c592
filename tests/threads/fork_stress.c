/*
 * fork_stress.c - fork() while another thread runs CPU matmuls that set
 * OpenBLAS's thread count: every child can use the library.
 *
 * A run with GPUPROBE_MATMUL_CPU_THREADS > 0 holds a process-wide lock
 * from saving the count to restoring it (lib/cpu_matmul.c). A child forked
 * while another thread held it would inherit it locked, and its own first
 * such run would wait forever. One thread runs small matmuls with
 * CPU_THREADS = 1 back to back; the main thread forks (200 times); each
 * child runs a matmul with CPU_THREADS = 1 in a new context and checks
 * that OpenBLAS's count is the one the parent had before any run, then
 * _exit()s. A child still running after WATCHDOG_S seconds is killed and
 * counted as hung; any hung or failed child fails the test.
 *
 * Run by ctest (it skips itself under AddressSanitizer, below), and by
 * scripts/reliability under ThreadSanitizer (with die_after_fork=0: the
 * child starts OpenBLAS's threads again) and valgrind.
 *
 *   fork_stress [forks]     (default 200)
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gpuprobe.h>

int openblas_get_num_threads(void);

#ifndef WATCHDOG_S
#define WATCHDOG_S 10
#endif

/* AddressSanitizer's allocator (GCC 12, clang 14) is not fork-safe: a
 * child forked while another thread is inside malloc() inherits the
 * allocator's region lock held and waits on it forever at its first
 * malloc() (seen: about one run in three of 200 forks, the child stopped
 * in SizeClassAllocator64::GetFromAllocator under read_cpuinfo()). glibc's
 * malloc takes its locks around fork(), so the plain, TSan and valgrind
 * runs test the library; under ASan the test skips itself. */
#if defined(__SANITIZE_ADDRESS__)
#define GP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GP_ASAN 1
#endif
#endif
#ifndef GP_ASAN
#define GP_ASAN 0
#endif

static atomic_int stop;
static atomic_int runs;
static atomic_int worker_failures;

static gpuprobe_status small_run(gpuprobe_context *ctx, int64_t m)
{
    gpuprobe_matmul_options *o = NULL;
    if (gpuprobe_matmul_options_create(&o) != GPUPROBE_OK)
        return GPUPROBE_ERR_OUT_OF_MEMORY;
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, m);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_CPU_THREADS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP, 0);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_WARMUP_MS, 0); /* no search: as short as can be */
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_MAX_RUNS, 1);
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_run(ctx, 0, o, 0, &r);
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
    return st;
}

static void *worker(void *arg)
{
    (void)arg;
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK) {
        atomic_fetch_add(&worker_failures, 1);
        return NULL;
    }
    while (!atomic_load(&stop)) {
        /* Large enough that the lock is held most of the time. */
        if (small_run(ctx, 128) != GPUPROBE_OK)
            atomic_fetch_add(&worker_failures, 1);
        atomic_fetch_add(&runs, 1);
    }
    gpuprobe_context_destroy(ctx);
    return NULL;
}

/* In the child: 0 when the library works, the count is the parent's. */
static int child(int count_before)
{
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return 3;
    gpuprobe_status st = small_run(ctx, 24);
    gpuprobe_context_destroy(ctx);
    if (st != GPUPROBE_OK)
        return 4;
    return openblas_get_num_threads() == count_before ? 0 : 5;
}

int main(int argc, char **argv)
{
    if (GP_ASAN) {
        puts("SKIP: AddressSanitizer's allocator is not fork-safe (see the source)");
        return 77;
    }
    int forks = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 200;
    unsetenv("GPUPROBE_DEVICE");
    int count_before = openblas_get_num_threads();

    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) {
        fprintf(stderr, "fork_stress: pthread_create failed\n");
        return 1;
    }
    /* Let the worker get going. */
    while (atomic_load(&runs) < 3)
        sched_yield();

    int hung = 0, failed = 0;
    for (int i = 0; i < forks; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork_stress: fork");
            failed++;
            break;
        }
        if (pid == 0)
            _exit(child(count_before));
        struct timespec start, now, tick = {0, 2000000};
        clock_gettime(CLOCK_MONOTONIC, &start);
        int status = 0;
        for (;;) {
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid)
                break;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (r < 0 || now.tv_sec - start.tv_sec >= WATCHDOG_S) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                hung++;
                fprintf(stderr, "fork_stress: child %d hung (killed after %d s)\n",
                        i, WATCHDOG_S);
                break;
            }
            nanosleep(&tick, NULL);
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            failed++;
            fprintf(stderr, "fork_stress: child %d failed with code %d\n", i,
                    WEXITSTATUS(status));
        } else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
            failed++;
            fprintf(stderr, "fork_stress: child %d killed by signal %d\n", i,
                    WTERMSIG(status));
        }
        if (hung)
            break; /* one is proof enough; do not spend the watchdog again */
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    int wf = atomic_load(&worker_failures);
    printf("fork_stress: %d fork(s) during %d matmul(s) setting the thread "
           "count: %d hung, %d failed; %d failed run(s) in the parent; "
           "OpenBLAS threads %d before, %d after\n",
           forks, atomic_load(&runs), hung, failed, wf, count_before,
           openblas_get_num_threads());
    return hung || failed || wf || openblas_get_num_threads() != count_before;
}
