/*
 * raw_sgemm.c - the reference for scripts/bench-matmul: a plain loop of
 * cblas_sgemm calls, timed the simplest way, to compare libgpuprobe's
 * reported figure against: n x n x n, row-major, inputs uniform in (-1, 1),
 * warm-up calls, then every call timed on its own (a clock read on each
 * side, nothing else) and the median of the calls: at least RUNS calls,
 * and more until MIN_SECONDS of calls were timed (so a sub-millisecond
 * size is the median of thousands of calls).
 *
 * Usage: raw_sgemm N [RUNS [WARMUP [THREADS [MIN_SECONDS]]]]
 * Prints one line: "raw_sgemm n=N runs=R threads=T median_s=S gflops=G".
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: raw_sgemm N [RUNS [WARMUP [THREADS]]]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    long runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    long warmup = argc > 3 ? strtol(argv[3], NULL, 10) : 1;
    long threads = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
    double min_s = argc > 5 ? strtod(argv[5], NULL) : 0.0;
    if (n < 1 || n > 46340 || runs < 1 || runs > 10000 || warmup < 0 || threads < 0 ||
        !(min_s >= 0 && min_s <= 60)) {
        fprintf(stderr, "raw_sgemm: bad arguments\n");
        return 2;
    }
    if (threads > 0)
        openblas_set_num_threads((int)threads);
    size_t count = (size_t)n * (size_t)n;
    float *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b);
    float *c = malloc(count * sizeof *c);
    const long cap = 1000000; /* calls timed at most */
    double *t = malloc((size_t)cap * sizeof *t);
    if (!a || !b || !c || !t) {
        fprintf(stderr, "raw_sgemm: out of memory\n");
        return 1;
    }
    uint64_t s = 42;
    for (size_t i = 0; i < count; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        a[i] = (float)((double)(s >> 40) / 8388608.0 - 1.0);
        s = s * 6364136223846793005u + 1442695040888963407u;
        b[i] = (float)((double)(s >> 40) / 8388608.0 - 1.0);
        c[i] = 0.0f;
    }
    int in = (int)n;
    for (long w = 0; w < warmup; w++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a, in,
                    b, in, 0.0f, c, in);
    double total = 0.0;
    long r = 0;
    while (r < cap && (r < runs || total < min_s)) {
        double t0 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a, in,
                    b, in, 0.0f, c, in);
        t[r] = now_s() - t0;
        total += t[r++];
    }
    runs = r;
    qsort(t, (size_t)runs, sizeof *t, cmp);
    double med = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
    printf("raw_sgemm n=%ld runs=%ld threads=%d median_s=%.9f gflops=%.3f check=%g\n", n,
           runs, openblas_get_num_threads(), med, 2.0 * (double)n * n * n / med / 1e9,
           (double)c[count / 2]);
    free(a);
    free(b);
    free(c);
    free(t);
    return 0;
}
