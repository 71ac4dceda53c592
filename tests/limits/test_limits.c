/*
 * test_limits.c - CPU matmuls under memory limits never hang and are never
 * killed: they run, or fail with GPUPROBE_ERR_OUT_OF_MEMORY naming the
 * limit.
 *
 * OpenBLAS maps a 128 MiB buffer per thread and retries forever when it
 * cannot (see lib/cpu_blas.h): under RLIMIT_AS or RLIMIT_DATA a matmul
 * (or the load of OpenBLAS itself, which starts its pool) that does not
 * fit would spin at 100% CPU, or return and then never exit. Under a tight
 * cgroup limit it would be killed by the OOM killer instead. Each case
 * runs limit_run (a program linked with the shared library only, given as
 * argv[1]) in a child process under a watchdog: a child still running
 * after WATCHDOG_S seconds is killed and the case fails as a hang; a child
 * killed by a signal fails as killed.
 *
 * Limits do not mix with sanitizers (their shadow memory is terabytes of
 * address space, and fills a small cgroup): every case is skipped in
 * sanitizer builds. The cgroup case needs a memory cgroup it can create (root, or a
 * delegated cgroup v2 subtree); it is skipped, with the reason, where
 * there is none.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||    \
    __has_feature(memory_sanitizer)
#define GP_SANITIZED 1
#endif
#endif
#ifndef GP_SANITIZED
#define GP_SANITIZED 0
#endif

#ifndef WATCHDOG_S
#define WATCHDOG_S 30
#endif

static const char *runner; /* the limit_run program */

/* Run limit_run with these arguments in a child. 0 when it exited 0;
 * else -1 with why it failed (a hang, a signal, an exit status) in why. */
static int try_limit(const char *const *args, char *why, size_t size)
{
    char *argv[16];
    size_t n = 0;
    argv[n++] = (char *)runner;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, size, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execv(runner, argv);
        perror("execv");
        _exit(127);
    }
    struct timespec start, now, tick = {0, 20000000};
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
            snprintf(why, size, "limit_run %s %s ...: hung, killed after %d s",
                     args[0], args[1] ? args[1] : "", WATCHDOG_S);
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    if (WIFSIGNALED(status)) {
        snprintf(why, size, "limit_run %s: killed by signal %d", args[0],
                 WTERMSIG(status));
        return -1;
    }
    if (WEXITSTATUS(status) != 0) {
        snprintf(why, size, "limit_run %s: exit status %d", args[0],
                 WEXITSTATUS(status));
        return -1;
    }
    return 0;
}

static void run_limit(const char *const *args)
{
    char why[256];
    if (try_limit(args, why, sizeof why) != 0)
        fail_msg("%s", why);
}

static int skip_sanitized(void)
{
    if (GP_SANITIZED)
        print_message("sanitizer build: its shadow memory does not fit under "
                      "an address-space limit\n");
    return GP_SANITIZED;
}

/* `ulimit -v 100000`: not even OpenBLAS's pool fits. Loading
 * it is refused; nothing spins, the process exits. */
static void as_tiny_load(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    const char *const a[] = {"as", "before", "=100000", "16", "0", "oom", NULL};
    run_limit(a);
}

/* The refusal counts the pool OpenBLAS would start: OPENBLAS_NUM_THREADS
 * threads (at most one per CPU), the calling one among them. */
static void as_tiny_load_counts_pool(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    int workers = (cpus < 2 ? (int)(cpus < 1 ? 1 : cpus) : 2) - 1;
    char expect[64];
    snprintf(expect, sizeof expect, "%d pool thread%s with", workers, workers == 1 ? "" : "s");
    const char *was = getenv("OPENBLAS_NUM_THREADS");
    char saved[32] = "";
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    assert_int_equal(setenv("OPENBLAS_NUM_THREADS", "2", 1), 0);
    assert_int_equal(setenv("LIMIT_RUN_EXPECT", expect, 1), 0);
    const char *const a[] = {"as", "before", "=100000", "16", "0", "oom", NULL};
    char why[256];
    int r = try_limit(a, why, sizeof why);
    unsetenv("LIMIT_RUN_EXPECT");
    if (was)
        setenv("OPENBLAS_NUM_THREADS", saved, 1);
    else
        unsetenv("OPENBLAS_NUM_THREADS");
    if (r != 0)
        fail_msg("%s (expected \"%s\")", why, expect);
}

/* `ulimit -v 2000000` and n = 12000: A, B and C (1.7 GB) fit, OpenBLAS's
 * buffers do not. */
static void as_12000(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    if (sysconf(_SC_NPROCESSORS_CONF) < 2) {
        /* No pool thread: the run fits under 2000000 KiB (and takes
         * minutes); as_caller_buffer covers the case. */
        print_message("one CPU: OpenBLAS starts no pool thread, the run fits\n");
        skip();
    }
    const char *const a[] = {"as", "before", "=2000000", "12000", "0", "oom", NULL};
    run_limit(a);
}

/* OpenBLAS loaded and settled; room for A, B and C of 2000 (48 MB) but
 * not for the calling thread's 128 MiB buffer as well. */
static void as_caller_buffer(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    const char *const a[] = {"as", "after", "100", "2000", "1", "oom", NULL};
    run_limit(a);
}

static void data_caller_buffer(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    const char *const a[] = {"data", "after", "100", "2000", "1", "oom", NULL};
    run_limit(a);
}

/* A thread count of 1024 starts OpenBLAS's maximum (MAX_THREADS=64 on
 * Debian): here 62 more threads, each with a 128 MiB buffer and a stack;
 * 256 MiB of room holds the caller's buffer and less than one of them. */
static void as_threads_1024(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    if (sysconf(_SC_NPROCESSORS_CONF) >= 64) {
        print_message("64 CPUs or more: OpenBLAS's pool is full already\n");
        skip();
    }
    const char *const a[] = {"as", "after", "256", "64", "1024", "oom", NULL};
    run_limit(a);
}

/* One thread more than the pool holds: the refusal counts one new pool
 * thread (and says "thread", not "threads"). */
static void as_one_new_thread(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (cpus < 1 || cpus >= 64 || getenv("OPENBLAS_NUM_THREADS") ||
        getenv("GOTO_NUM_THREADS") || getenv("OMP_NUM_THREADS")) {
        print_message("the pool is not one thread per CPU here\n");
        skip();
    }
    char threads[24];
    snprintf(threads, sizeof threads, "%ld", cpus + 1);
    assert_int_equal(setenv("LIMIT_RUN_EXPECT", "of 1 new pool thread", 1), 0);
    assert_int_equal(setenv("LIMIT_RUN_REJECT", "1 new pool threads", 1), 0);
    const char *const a[] = {"as", "after", "100", "64", threads, "oom", NULL};
    char why[256];
    int r = try_limit(a, why, sizeof why);
    unsetenv("LIMIT_RUN_EXPECT");
    unsetenv("LIMIT_RUN_REJECT");
    if (r != 0)
        fail_msg("%s", why);
}

/* Room for the run: it runs, verifies and the process exits. */
static void as_fits(void **state)
{
    (void)state;
    if (skip_sanitized())
        skip();
    const char *const a[] = {"as", "after", "200", "256", "0", "ok", NULL};
    run_limit(a);
    const char *const b[] = {"data", "after", "200", "256", "1", "ok", NULL};
    run_limit(b);
}

/* ---- a real memory cgroup ---- */

/* This process's cgroup directory for the memory controller (v1 mount or
 * v2 unified), or -1. */
static int own_cgroup(char *dir, size_t size, int *v2)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[4096];
    int found = -1;
    while (found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        if (strcmp(c1 + 1, "memory") == 0 || strstr(c1 + 1, "memory,") ||
            strstr(c1 + 1, ",memory")) {
            snprintf(dir, size, "/sys/fs/cgroup/memory%s", c2 + 1);
            *v2 = 0;
            found = 0;
        } else if (line[0] == '0' && c1 == line + 1 && c1[1] == '\0') {
            snprintf(dir, size, "/sys/fs/cgroup%s", c2 + 1);
            *v2 = 1;
            found = 0;
        }
    }
    fclose(f);
    return found;
}

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[4200];
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void cgroup_oom_named(void **state)
{
    (void)state;
    if (GP_SANITIZED) {
        /* Shadow memory and quarantine count against the cgroup too. */
        print_message("sanitizer build: its own memory would fill the cgroup\n");
        skip();
    }
    char parent[4096], dir[4200];
    int v2 = 0;
    if (own_cgroup(parent, sizeof parent, &v2) != 0) {
        print_message("no memory cgroup in /proc/self/cgroup\n");
        skip();
    }
    snprintf(dir, sizeof dir, "%s/gpuprobe-test-%d", parent, (int)getpid());
    if (mkdir(dir, 0755) != 0) {
        print_message("cannot create a memory cgroup under %s (%s): not root "
                      "or not delegated\n", parent, strerror(errno));
        skip();
    }
    /* 96 MiB: limit_run's own pages and OpenBLAS's data fit, with room
     * for a matmul of a few thousand. */
    const char *limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
    if (write_text(dir, limit_file, "100663296\n") != 0) {
        print_message("cannot set %s/%s: %s\n", dir, limit_file, strerror(errno));
        rmdir(dir);
        skip();
    }
    if (v2)
        (void)write_text(dir, "memory.swap.max", "0\n");
    const char *const a[] = {"cgroup", dir, NULL};
    char why[256];
    int r = try_limit(a, why, sizeof why);
    assert_int_equal(rmdir(dir), 0); /* limit_run has exited: empty */
    if (r != 0)
        fail_msg("%s", why);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_limits PATH-TO-limit_run\n");
        return 2;
    }
    runner = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(as_tiny_load),
        cmocka_unit_test(as_tiny_load_counts_pool),
        cmocka_unit_test(as_one_new_thread),
        cmocka_unit_test(as_12000),
        cmocka_unit_test(as_caller_buffer),
        cmocka_unit_test(data_caller_buffer),
        cmocka_unit_test(as_threads_1024),
        cmocka_unit_test(as_fits),
        cmocka_unit_test(cgroup_oom_named),
    };
    return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
