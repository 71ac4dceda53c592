/*
 * runstat.c - median wall time and peak RSS of a command over repeated runs.
 *
 * usage: runstat RUNS LABEL -- COMMAND [ARGS...]
 *
 * Prints one JSON object: {"label", "command", "runs", "median_ms",
 * "min_ms", "max_ms", "max_rss_mib", "failures"}. Each run is a fresh
 * process (fork + execvp from this small program, so the child's peak RSS
 * does not include a large parent's pages, as it would from Python), with
 * stdout and stderr sent to /dev/null; its peak RSS comes from wait4()'s
 * rusage for that child alone.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void json_chars(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
}

static void json_string(const char *s)
{
    putchar('"');
    json_chars(s);
    putchar('"');
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: runstat RUNS LABEL -- COMMAND [ARGS...]\n");
        return 2;
    }
    int runs = atoi(argv[1]);
    if (runs < 1 || runs > 100000) {
        fprintf(stderr, "runstat: RUNS must be 1..100000\n");
        return 2;
    }
    double *ms = calloc((size_t)runs, sizeof *ms);
    if (!ms)
        return 1;
    long max_rss_kib = 0;
    int failures = 0;
    for (int r = 0; r < runs; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid_t pid = fork();
        if (pid < 0) {
            perror("runstat: fork");
            return 1;
        }
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            execvp(argv[4], argv + 4);
            _exit(127);
        }
        int status = 0;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0) {
            perror("runstat: wait4");
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (ru.ru_maxrss > max_rss_kib)
            max_rss_kib = ru.ru_maxrss;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failures++;
    }
    qsort(ms, (size_t)runs, sizeof *ms, cmp);
    double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
    printf("{\"label\": ");
    json_string(argv[2]);
    printf(", \"command\": \"");
    for (int i = 4; i < argc; i++) {
        if (i > 4)
            putchar(' ');
        json_chars(argv[i]);
    }
    printf("\", \"runs\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, "
           "\"max_rss_mib\": %.2f, \"failures\": %d}\n",
           runs, median, ms[0], ms[runs - 1], (double)max_rss_kib / 1024.0, failures);
    free(ms);
    return failures ? 1 : 0;
}
