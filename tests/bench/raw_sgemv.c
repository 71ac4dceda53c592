/*
 * raw_sgemv.c - the OpenBLAS reference of scripts/bench-gemv: how fast an
 * engine that calls OpenBLAS reads fp32 weights in a decode. COUNT
 * row-major ROWS x COLS matrices, each multiplied by one vector with
 * cblas_sgemv in turn (y = W x, as a decode's projections read their
 * weights); a pass is one product per matrix, timed with a clock read on
 * each side. One untimed pass, then PASSES timed ones; the figure is the
 * bytes of the matrices / the best and the median pass. Before the timing
 * every row of every product is checked against a sum in double
 * precision: a reference that skipped or misread weights would be fast
 * and wrong.
 *
 * Usage: raw_sgemv ROWS COLS [COUNT [PASSES [THREADS]]]
 * (COUNT 1, PASSES 7, THREADS 0: OpenBLAS's default). Prints one line:
 * "raw_sgemv rows=R cols=C matrices=M passes=P threads=T best_gbps=B
 * median_gbps=D check=ok" and exits 0, or "check=FAIL ..." and exits 1.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <errno.h>
#include <math.h>
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

/* Uniform in (-1, 1) from a 64-bit LCG. */
static float next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (float)((double)(*s >> 40) / 8388608.0 - 1.0);
}

/* argv[i] as a whole decimal number in [lo, hi], or def where absent;
 * 0 on anything else ("12x", "", out of range). */
static int arg(int argc, char **argv, int i, long def, long lo, long hi, long *out)
{
    if (i >= argc) {
        *out = def;
        return 1;
    }
    char *end = NULL;
    errno = 0;
    *out = strtol(argv[i], &end, 10);
    return errno == 0 && end != argv[i] && *end == '\0' && *out >= lo && *out <= hi;
}

static void pass(float **w, long count, int rows, int cols, const float *x, float *y)
{
    for (long m = 0; m < count; m++)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.0f, w[m], cols, x, 1, 0.0f,
                    y + (size_t)m * (size_t)rows, 1);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: raw_sgemv ROWS COLS [COUNT [PASSES [THREADS]]]\n");
        return 2;
    }
    long rows, cols, count, passes, threads;
    if (argc > 6 || !arg(argc, argv, 1, 0, 1, 1L << 24, &rows) ||
        !arg(argc, argv, 2, 0, 1, 1L << 20, &cols) || !arg(argc, argv, 3, 1, 1, 64, &count) ||
        !arg(argc, argv, 4, 7, 1, 1000, &passes) || !arg(argc, argv, 5, 0, 0, 4096, &threads)) {
        fprintf(stderr, "raw_sgemv: bad arguments\n");
        return 2;
    }
    if (threads > 0)
        openblas_set_num_threads((int)threads);
    size_t elems = (size_t)rows * (size_t)cols;
    float **w = calloc((size_t)count, sizeof *w);
    float *x = malloc((size_t)cols * sizeof *x);
    float *y = malloc((size_t)count * (size_t)rows * sizeof *y);
    double *t = malloc((size_t)passes * sizeof *t);
    int ok = w && x && y && t;
    uint64_t s = 42;
    for (long m = 0; ok && m < count; m++) {
        w[m] = malloc(elems * sizeof(float));
        ok = w[m] != NULL;
        for (size_t i = 0; ok && i < elems; i++)
            w[m][i] = next(&s);
    }
    if (!ok) {
        fprintf(stderr, "raw_sgemv: out of memory\n");
        return 1;
    }
    for (long j = 0; j < cols; j++)
        x[j] = next(&s);

    /* The untimed pass, checked row by row. The terms are products of
     * numbers in (-1, 1): float's rounding leaves a row off by about
     * sqrt(cols) * 2^-24 (random walk), far below the tolerance of
     * cols * 2^-23, while a row skipped or read wrong is off by about
     * sqrt(cols) / 3. */
    int in_rows = (int)rows, in_cols = (int)cols;
    pass(w, count, in_rows, in_cols, x, y);
    size_t bad = 0;
    double tol = (double)cols * ldexp(1.0, -23) + 1e-6;
    for (long m = 0; m < count; m++)
        for (long r = 0; r < rows; r++) {
            const float *row = w[m] + (size_t)r * (size_t)cols;
            double want = 0.0;
            for (long j = 0; j < cols; j++)
                want += (double)row[j] * (double)x[j];
            bad += !(fabs((double)y[(size_t)m * (size_t)rows + (size_t)r] - want) <= tol);
        }

    for (long p = 0; p < passes; p++) {
        double t0 = now_s();
        pass(w, count, in_rows, in_cols, x, y);
        t[p] = now_s() - t0;
    }
    qsort(t, (size_t)passes, sizeof *t, cmp);
    double med = passes % 2 ? t[passes / 2] : 0.5 * (t[passes / 2 - 1] + t[passes / 2]);
    double bytes = (double)count * (double)elems * sizeof(float);
    printf("raw_sgemv rows=%ld cols=%ld matrices=%ld passes=%ld threads=%d best_gbps=%.2f "
           "median_gbps=%.2f check=%s",
           rows, cols, count, passes, openblas_get_num_threads(), bytes / t[0] / 1e9,
           bytes / med / 1e9, bad ? "FAIL" : "ok");
    if (bad)
        printf(" (%zu of %ld rows wrong)", bad, count * rows);
    printf("\n");
    for (long m = 0; m < count; m++)
        free(w[m]);
    free(w);
    free(x);
    free(y);
    free(t);
    return bad ? 1 : 0;
}
