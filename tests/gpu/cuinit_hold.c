/*
 * cuinit_hold.c - the CUDA driver initialised, and nothing more, held for
 * a while: the control of scripts/gpu-check step 7 (probe without
 * touching). What NVML's used memory does while this runs is what any
 * process that calls cuInit() costs the GPU before it makes a context;
 * the library's enumeration calls it too.
 *
 * usage: cuinit_hold MILLISECONDS (0 to 60000)
 * Prints "cuInit: STATUS in T ms", holds, prints "held M ms", and exits
 * 0 when cuInit returned CUDA_SUCCESS (0), 1 when it returned another
 * status, 2 on a bad command line, 77 when libcuda.so.1 cannot be loaded
 * or lacks cuInit.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*cu_init_fn)(unsigned int flags);

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    errno = 0;
    long hold = argc == 2 ? strtol(argv[1], &end, 10) : -1;
    if (argc != 2 || errno != 0 || end == argv[1] || *end != '\0' || hold < 0 || hold > 60000) {
        fprintf(stderr, "usage: cuinit_hold MILLISECONDS (0 to 60000)\n");
        return 2;
    }
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!drv) {
        fprintf(stderr, "cuinit_hold: %s\n", dlerror());
        return 77;
    }
    cu_init_fn cu_init = NULL;
    *(void **)&cu_init = dlsym(drv, "cuInit");
    if (!cu_init) {
        fprintf(stderr, "cuinit_hold: libcuda.so.1 lacks cuInit\n");
        return 77;
    }
    double t0 = now_ms();
    int rc = cu_init(0);
    double t1 = now_ms();
    printf("cuInit: %d in %.1f ms\n", rc, t1 - t0);
    fflush(stdout); /* the caller samples while this holds */
    struct timespec hold_ts = {hold / 1000, (hold % 1000) * 1000000L};
    while (nanosleep(&hold_ts, &hold_ts) != 0 && errno == EINTR)
        ;
    printf("held %ld ms\n", hold);
    return rc == 0 ? 0 : 1;
}
