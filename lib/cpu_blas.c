/*
 * cpu_blas.c - run-time loading of OpenBLAS (see cpu_blas.h).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cpu_blas.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* dlsym into a typed function pointer without a pedantic object-to-function
 * cast warning. Returns 0 when found. */
#define BIND(lib, name, field)                                                \
    (*(void **)(&(field)) = dlsym((lib), (name)), (field) == NULL)

gpuprobe_status gp_openblas_get(gpuprobe_context *ctx, const gp_openblas **out)
{
    if (ctx->openblas) {
        *out = ctx->openblas;
        return GPUPROBE_OK;
    }
    gp_openblas *b = calloc(1, sizeof *b);
    if (!b)
        return gp_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY,
                       "allocating %zu bytes to load OpenBLAS", sizeof *b);
    b->lib = gp_dlopen(GP_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!b->lib) {
        const char *why = dlerror();
        free(b);
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "OpenBLAS (%s) could not be loaded: %s (Debian: "
                       "libopenblas0)",
                       GP_OPENBLAS_SONAME, why ? why : "not found");
    }
    const char *missing = NULL;
    if (BIND(b->lib, "cblas_sgemm", b->sgemm))
        missing = "cblas_sgemm";
    else if (BIND(b->lib, "cblas_dgemm", b->dgemm))
        missing = "cblas_dgemm";
    else if (BIND(b->lib, "openblas_get_num_threads", b->get_num_threads))
        missing = "openblas_get_num_threads";
    else if (BIND(b->lib, "openblas_set_num_threads", b->set_num_threads))
        missing = "openblas_set_num_threads";
    else if (BIND(b->lib, "openblas_get_corename", b->get_corename))
        missing = "openblas_get_corename";
    else if (BIND(b->lib, "openblas_get_config", b->get_config))
        missing = "openblas_get_config";
    if (missing) {
        /* Not OpenBLAS after all: drop our reference. */
        dlclose(b->lib);
        free(b);
        return gp_fail(ctx, GPUPROBE_ERR_UNSUPPORTED,
                       "%s has no %s: not an OpenBLAS build libgpuprobe can use",
                       GP_OPENBLAS_SONAME, missing);
    }
    ctx->openblas = b;
    *out = b;
    return GPUPROBE_OK;
}

void gp_openblas_release(gp_openblas *blas)
{
    free(blas); /* the library itself stays loaded: see cpu_blas.h */
}

void gp_openblas_name(const gp_openblas *blas, char *dst, size_t size)
{
    /* openblas_get_config() reads e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH
     * NO_AFFINITY Haswell MAX_THREADS=64": keep the name and version, then
     * add the core actually selected at run time. */
    const char *cfg = blas->get_config();
    const char *core = blas->get_corename();
    char ver[64] = "OpenBLAS";
    if (cfg) {
        size_t len = 0, spaces = 0;
        while (cfg[len] && len + 1 < sizeof ver) {
            if (cfg[len] == ' ' && ++spaces == 2)
                break;
            len++;
        }
        memcpy(ver, cfg, len);
        ver[len] = '\0';
    }
    gp_snprintf(dst, size, "%s %s", ver, core && core[0] ? core : "unknown-core");
}
