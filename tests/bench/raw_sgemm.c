/*
 * raw_sgemm.c - the reference for scripts/bench-matmul: a plain loop of
 * cblas_sgemm calls, timed the simplest way, to compare libgpuprobe's
 * reported figure against: n x n x n, row-major, inputs uniform in (-1, 1),
 * warm-up calls, then blocks of BATCH calls back to back, each block timed
 * on its own (a clock read on each side, nothing else), and the median of
 * the blocks divided by BATCH: at least RUNS blocks, and more until
 * MIN_SECONDS of blocks were timed. BATCH 1 (the default) times every
 * call alone. Nothing else: no warm-up rule, no calibration. A, B and C
 * are aligned to ALIGN bytes (64 by default, as the library's are); ALIGN
 * 0 takes them from malloc() as they come (16 bytes past a page for
 * large ones in glibc), which OpenBLAS's kernels run slower on.
 *
 * Usage: raw_sgemm N [RUNS [WARMUP [THREADS [MIN_SECONDS [BATCH [TRACE [ALIGN]]]]]]]
 * Prints one line: "raw_sgemm n=N runs=R batch=B threads=T median_s=S
 * gflops=G ..."; with TRACE 1, first one line per block: its start (seconds
 * since the first warm-up call), its time per call, the page faults the
 * process took during it, the CPU the calling thread was on when it ended
 * and those of the process's other threads (OpenBLAS's pool) then, from
 * /proc/self/task; the warm-up calls are block 0.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <dirent.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
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

/* The CPUs the process's other threads last ran on, comma-separated: field
 * 39 of /proc/self/task/TID/stat. */
static void other_cpus(char *out, size_t size)
{
    out[0] = '\0';
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    pid_t self = (pid_t)gettid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == self)
            continue;
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')'), *save = NULL;
        int field = 2;
        for (char *tok = p ? strtok_r(p + 1, " ", &save) : NULL; tok;
             tok = strtok_r(NULL, " ", &save))
            if (++field == 39) {
                size_t len = strlen(out);
                snprintf(out + len, size - len, "%s%s", len ? "," : "", tok);
                break;
            }
    }
    closedir(d);
}

/* Minor page faults of the process so far. */
static long faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

static void trace_block(long r, double start, double t0, double t1, long calls, long *flt)
{
    char others[256];
    other_cpus(others, sizeof others);
    long now = faults();
    printf("block %ld start_s=%.6f call_s=%.9f faults=%ld cpu=%d others=%s\n", r, t0 - start,
           calls > 0 ? (t1 - t0) / (double)calls : 0.0, now - *flt, sched_getcpu(), others);
    *flt = faults();
}

/* count floats, aligned to align bytes (0: as malloc gives them). */
static float *matrix(size_t count, size_t align)
{
    void *p = NULL;
    if (align == 0)
        return malloc(count * sizeof(float));
    return posix_memalign(&p, align, count * sizeof(float)) == 0 ? p : NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: raw_sgemm N [RUNS [WARMUP [THREADS [MIN_SECONDS [BATCH [TRACE [ALIGN]]]]]]]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    long runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    long warmup = argc > 3 ? strtol(argv[3], NULL, 10) : 1;
    long threads = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
    double min_s = argc > 5 ? strtod(argv[5], NULL) : 0.0;
    long batch = argc > 6 ? strtol(argv[6], NULL, 10) : 1;
    long trace = argc > 7 ? strtol(argv[7], NULL, 10) : 0;
    long align = argc > 8 ? strtol(argv[8], NULL, 10) : 64;
    if (n < 1 || n > 46340 || runs < 1 || runs > 10000 || warmup < 0 || threads < 0 ||
        !(min_s >= 0 && min_s <= 600) || batch < 1 || batch > (1L << 20) || trace < 0 ||
        trace > 1 || (align != 0 && (align < 16 || align > 4096 || (align & (align - 1))))) {
        fprintf(stderr, "raw_sgemm: bad arguments\n");
        return 2;
    }
    if (threads > 0)
        openblas_set_num_threads((int)threads);
    size_t count = (size_t)n * (size_t)n;
    float *a = matrix(count, (size_t)align), *b = matrix(count, (size_t)align);
    float *c = matrix(count, (size_t)align);
    const long cap = 1000000; /* blocks timed at most */
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
    long flt = faults();
    double start = now_s();
    for (long w = 0; w < warmup; w++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a, in,
                    b, in, 0.0f, c, in);
    if (trace)
        trace_block(0, start, start, now_s(), warmup, &flt);
    double total = 0.0;
    long r = 0;
    while (r < cap && (r < runs || total < min_s)) {
        double t0 = now_s();
        for (long i = 0; i < batch; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a,
                        in, b, in, 0.0f, c, in);
        double t1 = now_s();
        t[r] = t1 - t0;
        total += t[r++];
        if (trace)
            trace_block(r, start, t0, t1, batch, &flt);
    }
    runs = r;
    qsort(t, (size_t)runs, sizeof *t, cmp);
    double med = (runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2])) / (double)batch;
    printf("raw_sgemm n=%ld runs=%ld batch=%ld align=%ld threads=%d median_s=%.9f gflops=%.3f "
           "seconds=%.3f check=%g\n",
           n, runs, batch, align, openblas_get_num_threads(), med,
           2.0 * (double)n * n * n / med / 1e9, now_s() - start, (double)c[count / 2]);
    free(a);
    free(b);
    free(c);
    free(t);
    return 0;
}
