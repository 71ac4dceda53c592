/*
 * simcuda.h - control interface of the simulated NVIDIA stack used by the
 * scenario tests (tests/simcuda/). Not a CUDA API: every name here has the
 * simcuda_ prefix, so nothing can mistake it for the real libraries.
 *
 * The simulation is a set of shared libraries with the real SONAMEs
 * (libcuda.so.1, libcudart.so.13 and .12, libcublas.so.13 and .12,
 * libnvidia-ml.so.1) that all keep their state in one core library,
 * libsimcuda.so: the driver, the runtime, cuBLAS and NVML of a process see
 * the same GPUs, contexts and allocations. A test program links the core to
 * configure the fleet, inject failures and read the call log; a program run
 * as a whole is configured through the environment instead:
 *
 *   SIMCUDA_FLEET   the configuration text (';' may separate lines)
 *   SIMCUDA_CONFIG  a file holding the configuration text
 *   SIMCUDA_LOG     append one line per simulated call to this file
 *   SIMCUDA_STATS   at exit, write to this file what the process did to the
 *                   devices, as one JSON object: {"contexts_created": N,
 *                   "context_bytes": N (the device memory they took),
 *                   "bytes_allocated": N, "calls": N}, summed over the
 *                   units since configuration
 *
 * Without either variable the fleet is one H200 (preset = H200).
 * docs/testing.md describes the configuration language.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef SIMCUDA_H
#define SIMCUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Replace the whole simulated state (every context, allocation, handle,
 * rule and log entry is dropped; the driver, runtime and NVML are
 * uninitialised again, as in a new process) by the fleet described in
 * `text`. 0 on success; -1 with simcuda_error() on a configuration error,
 * and then the state is left as it was. Threads other than the caller must
 * not be inside a simulated call. */
int simcuda_configure(const char *text);
int simcuda_configure_file(const char *path);
/* Why the last simcuda_* call failed. */
const char *simcuda_error(void);

/* One configuration line outside a section ("mode = deferred",
 * "gemm_bug = rowmajor", "fail = cudaMalloc:2"), applied to the running
 * state without resetting it. 0 or -1 (simcuda_error()). */
int simcuda_set(const char *line);

/* ---- failure injection ---- */

/* Fail the nth call (counted from 1, from now on) of the simulated function
 * `func` (its exported name, e.g. "cudaMalloc", "cuMemGetInfo_v2",
 * "cublasCreate_v2", "nvmlInit_v2") with `code`, or with a realistic code
 * for that function when code is 0. With SIMCUDA_FROM every later call
 * fails too. A failed call has no other effect than its result (a runtime
 * error also becomes the thread's last error; a sticky error code poisons
 * the current context). With SIMCUDA_LATE the call runs as it would,
 * writing its outputs, and then returns the failure (never sticky): the
 * outputs of a failed call, which a caller must not trust. 0 or -1. */
#define SIMCUDA_ONCE 0u
#define SIMCUDA_FROM 1u
#define SIMCUDA_LATE 2u
int simcuda_fail(const char *func, unsigned long nth, int code, unsigned flags);
/* The nth successful enqueue of `func` ("cublasGemmEx", "cudaMemcpyAsync"
 * or "cudaMemsetAsync") returns success, and its work raises the sticky
 * asynchronous error cudaErrorIllegalAddress when it executes: the context
 * is unusable from then on, as after a real kernel fault. 0 or -1. */
int simcuda_fault_async(const char *func, unsigned long nth);
/* Remove every rule. */
void simcuda_clear_faults(void);
/* How many injected failures and faults have fired since configuration. */
unsigned long simcuda_faults_fired(void);

/* ---- the call log ---- */

#define SIMCUDA_ANY (-2) /* simcuda_log_count(): any device, or none */
#define SIMCUDA_NONE (-1) /* no current context */

typedef struct simcuda_call {
    unsigned long seq;  /* 1, 2, ... since configuration */
    const char *func;   /* exported name, e.g. "cuCtxPushCurrent_v2" */
    int thread;         /* 1, 2, ...: the calling thread, in order of first call */
    int gpu;            /* unit (see simcuda_unit) of the thread's
                           current context when the call began, SIMCUDA_NONE */
    int gpu_after;      /* the same when the call returned */
    int result;         /* the code returned (0 success; NVML/cuBLAS codes too) */
    int injected;       /* 1 when the result was injected */
} simcuda_call;

size_t simcuda_log_size(void);
/* Copy entry i (0-based) of the log; 0 or -1 when out of range. */
int simcuda_log_entry(size_t i, simcuda_call *out);
void simcuda_log_clear(void);
/* Calls of `func` (NULL: any function) whose current context at entry or
 * at return was on unit `gpu` (SIMCUDA_ANY: whatever it was). */
size_t simcuda_log_count(const char *func, int gpu);

/* ---- the state ---- */

/* Units are the GPUs and MIG instances of the configuration, numbered in
 * the order the configuration lists them (a [mig] follows its [gpu]). */
int simcuda_unit_count(void);
/* The unit of CUDA ordinal `ordinal` as this process enumerates it (after
 * CUDA_VISIBLE_DEVICES; the driver must have been initialised), or -1. */
int simcuda_unit_of_ordinal(int ordinal);

typedef struct simcuda_unit_state {
    int ordinal;              /* CUDA ordinal, -1 when not enumerated */
    int context_active;       /* the primary context exists */
    unsigned context_refs;    /* its reference count (retains) */
    int runtime_holds;        /* one of those references is the runtime's */
    int faulted;              /* a sticky error poisons the context (its cudaError_t) */
    uint64_t total_bytes;     /* as cuMemGetInfo reports */
    uint64_t free_bytes;      /* the same, now */
    uint64_t context_bytes;   /* what the context costs while it exists */
    uint64_t allocated_bytes; /* cudaMalloc'd by this process, workspaces included */
    size_t allocations;       /* live device allocations, workspaces included */
    size_t workspaces;        /* of which cuBLAS workspaces */
    size_t streams;           /* live streams, the legacy default stream excluded */
    size_t events;            /* live events */
    size_t blas_handles;      /* live cuBLAS handles */
    size_t pending_ops;       /* queued work not executed yet (deferred mode) */
    unsigned long contexts_created; /* primary contexts created since configuration */
    uint64_t bytes_allocated; /* device memory allocated since configuration, summed */
} simcuda_unit_state;
int simcuda_unit(int unit, simcuda_unit_state *out);

/* Live pinned host allocations (cudaMallocHost) and their bytes. */
size_t simcuda_pinned_count(void);
uint64_t simcuda_pinned_bytes(void);
/* NVML: nvmlInit calls not yet matched by nvmlShutdown. */
unsigned simcuda_nvml_refs(void);

#ifdef __cplusplus
}
#endif

#endif
