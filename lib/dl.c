/*
 * dl.c - the dlopen seam: every library libgpuprobe opens at run time
 * (the CUDA runtime, driver and cuBLAS, NVML, OpenBLAS) is opened, and its
 * functions looked up, here. Second floor: calls only the helpers. See
 * docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

void *(*gp_test_dlopen)(const char *file, int mode);
int (*gp_test_dlsym_hide)(const char *name);

void *gp_dlopen(const char *file, int mode)
{
    (void)dlerror(); /* clear a stale message */
    return gp_test_dlopen ? gp_test_dlopen(file, mode) : dlopen(file, mode);
}

void gp_dlerror(char *buf, size_t size)
{
    /* The loader's text holds the path it was given, and so whatever bytes
     * GPUPROBE_CUDA_LIBDIR holds. */
    const char *e = dlerror();
    gp_quote(buf, size, e ? e : "cannot open shared object file", SIZE_MAX);
}

int gp_dlsym(void *lib, const char *name, void *slot, size_t slot_size)
{
    void *p = gp_test_dlsym_hide && gp_test_dlsym_hide(name) ? NULL : dlsym(lib, name);
    if (!p || slot_size != sizeof p)
        return -1;
    /* Copied as bytes: ISO C has no cast between dlsym()'s object pointer
     * and a function pointer. */
    memcpy(slot, &p, sizeof p);
    return 0;
}
