/*
 * replay.c - a main() for the libFuzzer harnesses, so that every ctest run
 * (any compiler, no libFuzzer) feeds each harness the empty input and its
 * committed corpus. A harness's checks then fail a normal test run when the
 * library's behaviour moves away from them (a default changed, a parameter
 * added), not only the fuzzing stage of scripts/reliability.
 *
 *   replay_<harness> [FILE | DIR]...
 *
 * Each FILE, and each regular file in each DIR (sorted by name), is read
 * whole and passed to LLVMFuzzerTestOneInput once; the empty input is passed
 * first, as libFuzzer does. A failed CHECK() aborts, so the test fails with
 * the harness's message. Exit status 0 when every input ran; 2 when an input
 * cannot be read.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                fprintf(stderr, "%s: out of memory\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file directly in dir, in name order; the count replayed,
 * or -1. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    long rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
            cap = ncap;
        }
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        if (!(names[n] = malloc(len))) {
            rc = -1;
            break;
        }
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (rc == 0)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (rc >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0)
                rc = -1;
            else
                rc++;
        }
        free(names[i]);
    }
    free(names);
    if (rc < 0)
        fprintf(stderr, "%s: could not replay every file\n", dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    long total = 1;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 2;
        }
        long got = S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                        : (replay_file(argv[i]) == 0 ? 1 : -1);
        if (got < 0)
            return 2;
        total += got;
    }
    printf("replayed %ld inputs (the empty one and the corpus)\n", total);
    return 0;
}
