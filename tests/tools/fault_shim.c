/*
 * fault_shim.c - an LD_PRELOAD library for the command tests: it makes
 * chosen public libgpuprobe calls fail, or gives devices a chosen name, so
 * that the failure and quoting paths of the commands and examples run on a
 * machine without a GPU and with a healthy system. It interposes at the ABI
 * boundary (the real function is found with dlsym(RTLD_NEXT)); the library
 * itself is unchanged.
 *
 *   GPUPROBE_SHIM_FAIL     comma-separated function names to fail, from
 *                          gpuprobe_device_memory, gpuprobe_device_capacity,
 *                          gpuprobe_device_count, gpuprobe_cuda_status,
 *                          gpuprobe_matmul_run; they return
 *                          GPUPROBE_ERR_SYSTEM
 *   GPUPROBE_SHIM_INDEX    fail (or rename) only this device index
 *   GPUPROBE_SHIM_MESSAGE  what gpuprobe_last_error() says after an injected
 *                          failure (any bytes), until the next interposed
 *                          call, as the library's message lasts until the
 *                          next call on the context
 *   GPUPROBE_SHIM_NAME     what GPUPROBE_ATTR_NAME returns (any bytes)
 *
 * and the file calls of an atomic file replacement fail as a full or
 * broken disk makes them fail:
 *
 *   GPUPROBE_SHIM_FS_FAIL  comma-separated names from write, fsync, rename:
 *                          they fail with errno GPUPROBE_SHIM_ERRNO (a
 *                          number; default 5, EIO); write and fsync only on
 *                          descriptors above 2 (files, not the standard
 *                          streams)
 *   GPUPROBE_SHIM_WRITE_LIMIT  with write: the first N bytes are written
 *                          (the write at the limit is short), then writes
 *                          fail, as on a disk that fills up
 *
 * The simulated NVIDIA stack (tests/simcuda/) drives the same tests with a
 * GPU that reports a hostile name itself and with failures injected inside
 * the CUDA libraries (tests/simcuda.cmake); the shim covers the CPU device
 * and builds without CUDA.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuprobe.h"

static int injected; /* the last interposed call failed on purpose */

/* The next definition of name: libgpuprobe's. POSIX lets dlsym()'s result
 * be a function; copy it into one to say so. */
typedef void (*any_fn)(void);
static any_fn real(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    any_fn f;
    if (!p)
        abort(); /* a test set-up error: say so loudly */
    memcpy(&f, &p, sizeof f);
    return f;
}

/* Is name in the comma-separated list? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* Should the call `name` on device index fail? */
static int fails(const char *name, size_t index, int has_index)
{
    const char *want = getenv("GPUPROBE_SHIM_INDEX");
    injected = 0;
    if (has_index && want && *want && strtoull(want, NULL, 10) != index)
        return 0;
    return injected = listed(getenv("GPUPROBE_SHIM_FAIL"), name);
}

typedef const char *last_error_fn(const gpuprobe_context *);
typedef gpuprobe_status memory_fn(gpuprobe_context *, size_t, gpuprobe_memory_info *, unsigned);
typedef gpuprobe_status capacity_fn(gpuprobe_context *, size_t, gpuprobe_dtype, gpuprobe_workload,
                                    unsigned, gpuprobe_capacity *);
typedef gpuprobe_status count_fn(gpuprobe_context *, size_t *);
typedef gpuprobe_status cuda_status_fn(gpuprobe_context *, gpuprobe_cuda_cause *, const char **);
typedef gpuprobe_status matmul_fn(gpuprobe_context *, size_t, const gpuprobe_matmul_options *,
                                  unsigned, gpuprobe_matmul_result **);
typedef gpuprobe_status get_string_fn(gpuprobe_context *, size_t, gpuprobe_attr, const char **);

const char *gpuprobe_last_error(const gpuprobe_context *ctx)
{
    const char *msg = getenv("GPUPROBE_SHIM_MESSAGE");
    if (injected)
        return msg ? msg : "injected failure";
    return ((last_error_fn *)real("gpuprobe_last_error"))(ctx);
}

gpuprobe_status gpuprobe_device_memory(gpuprobe_context *ctx, size_t index,
                                       gpuprobe_memory_info *out, unsigned flags)
{
    if (fails("gpuprobe_device_memory", index, 1))
        return GPUPROBE_ERR_SYSTEM;
    return ((memory_fn *)real("gpuprobe_device_memory"))(ctx, index, out, flags);
}

gpuprobe_status gpuprobe_device_capacity(gpuprobe_context *ctx, size_t index,
                                         gpuprobe_dtype dtype, gpuprobe_workload workload,
                                         unsigned flags, gpuprobe_capacity *out)
{
    if (fails("gpuprobe_device_capacity", index, 1))
        return GPUPROBE_ERR_SYSTEM;
    return ((capacity_fn *)real("gpuprobe_device_capacity"))(ctx, index, dtype, workload, flags, out);
}

gpuprobe_status gpuprobe_device_count(gpuprobe_context *ctx, size_t *count)
{
    if (fails("gpuprobe_device_count", 0, 0))
        return GPUPROBE_ERR_SYSTEM;
    return ((count_fn *)real("gpuprobe_device_count"))(ctx, count);
}

gpuprobe_status gpuprobe_cuda_status(gpuprobe_context *ctx, gpuprobe_cuda_cause *cause,
                                     const char **detail)
{
    if (fails("gpuprobe_cuda_status", 0, 0))
        return GPUPROBE_ERR_SYSTEM;
    return ((cuda_status_fn *)real("gpuprobe_cuda_status"))(ctx, cause, detail);
}

gpuprobe_status gpuprobe_matmul_run(gpuprobe_context *ctx, size_t device,
                                    const gpuprobe_matmul_options *opts, unsigned flags,
                                    gpuprobe_matmul_result **out)
{
    if (fails("gpuprobe_matmul_run", device, 1))
        return GPUPROBE_ERR_SYSTEM;
    return ((matmul_fn *)real("gpuprobe_matmul_run"))(ctx, device, opts, flags, out);
}

gpuprobe_status gpuprobe_device_get_string(gpuprobe_context *ctx, size_t index,
                                           gpuprobe_attr attr, const char **out)
{
    injected = 0; /* as in the library: a call ends the last one's message */
    gpuprobe_status st = ((get_string_fn *)real("gpuprobe_device_get_string"))(ctx, index, attr, out);
    const char *name = getenv("GPUPROBE_SHIM_NAME");
    const char *want = getenv("GPUPROBE_SHIM_INDEX");
    if (st == GPUPROBE_OK && attr == GPUPROBE_ATTR_NAME && name &&
        (!want || !*want || strtoull(want, NULL, 10) == index))
        *out = name;
    return st;
}

/* ---- file calls ---- */

typedef ssize_t write_fn(int, const void *, size_t);
typedef int fsync_fn(int);
typedef int rename_fn(const char *, const char *);

static int fs_fails(const char *name)
{
    return listed(getenv("GPUPROBE_SHIM_FS_FAIL"), name);
}

static int fs_errno(void)
{
    const char *e = getenv("GPUPROBE_SHIM_ERRNO");
    return e && *e ? atoi(e) : EIO;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static size_t written; /* bytes let through to files so far */
    if (fd > 2 && fs_fails("write")) {
        const char *limit = getenv("GPUPROBE_SHIM_WRITE_LIMIT");
        size_t room = limit && *limit ? strtoull(limit, NULL, 10) : 0;
        room = room > written ? room - written : 0;
        if (room == 0) {
            errno = fs_errno();
            return -1;
        }
        if (count > room)
            count = room;
        ssize_t n = ((write_fn *)real("write"))(fd, buf, count);
        if (n > 0)
            written += (size_t)n;
        return n;
    }
    return ((write_fn *)real("write"))(fd, buf, count);
}

int fsync(int fd)
{
    if (fd > 2 && fs_fails("fsync")) {
        errno = fs_errno();
        return -1;
    }
    return ((fsync_fn *)real("fsync"))(fd);
}

int rename(const char *from, const char *to)
{
    if (fs_fails("rename")) {
        errno = fs_errno();
        return -1;
    }
    return ((rename_fn *)real("rename"))(from, to);
}
