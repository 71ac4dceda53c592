/*
 * runtime.c - the simulated CUDA runtime API, built twice: as
 * libcudart.so.13 (SIM_RT_VERSION 13000) and libcudart.so.12 (12080).
 *
 * Semantics simulated, from the runtime API documentation:
 * - Initialisation (the first call that needs it): the driver library
 *   (libcuda.so.1) must be loadable, else cudaErrorInsufficientDriver; so
 *   must a driver whose CUDA major is at least the runtime's (minor-version
 *   compatibility holds within a major); then cuInit's result (no visible
 *   device: cudaErrorNoDevice).
 * - A call that needs a context uses the thread's current one (and the
 *   runtime takes its own reference on a primary context the first time it
 *   uses it); with none, it retains the primary context of the thread's
 *   device (cudaSetDevice, default 0) and makes it current. The runtime's
 *   reference lasts until cudaDeviceReset or process exit, as in CUDA.
 *   cudaSetDevice itself initialises the device's primary context (CUDA 12
 *   and later).
 * - Errors become the thread's last error (cudaGetLastError returns and
 *   clears it); a sticky error (cudaErrorIllegalAddress, ...) is returned
 *   by every call in its context until the context is destroyed.
 * - Copies: the direction must match the pointers (a device range must lie
 *   inside one allocation, else cudaErrorInvalidValue; the real runtime
 *   leaves a mismatched direction undefined); from pageable host memory
 *   the source is taken at the call, into pageable memory the call waits.
 *   Modelled time (copy_cost): the memory's rate device to device, the
 *   host link's for pinned or pageable host memory, slower when the link
 *   runs below its maximum (pcie below pcie_max).
 * - Streams and events: ordered queues; work runs at once (eager mode) or
 *   at a synchronising call (deferred mode); cudaEventElapsedTime returns
 *   cudaErrorInvalidResourceHandle for an event never recorded or created
 *   with cudaEventDisableTiming, cudaErrorNotReady for one not completed.
 * - cudaFree and cudaFreeHost first complete the work queued on the device
 *   (they synchronise, as in CUDA).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SIM_RT_VERSION
#error "SIM_RT_VERSION (e.g. 13000) must be defined"
#endif
#define SIM_RT_MAJOR (SIM_RT_VERSION / 1000)

/* ---- this runtime's initialisation ---- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int driver_present;

/* Like the real runtime: open libcuda.so.1 (and keep it). Only the
 * simulated driver counts; a real one found instead is "no driver". */
static void probe_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    if (dlsym(h, "simcuda_driver"))
        driver_present = 1;
    else
        fprintf(stderr, "simcuda: the libcuda.so.1 found is not the simulated one; "
                        "the simulated runtime treats the driver as absent\n");
}

static unsigned init_gen; /* sim.gen of the last initialisation */
static cudaError_t init_result;

static cudaError_t rt_init(void)
{
    if (init_gen == sim.gen)
        return init_result;
    init_gen = sim.gen;
    if (!driver_present || sim.cfg.driver_version / 1000 < SIM_RT_MAJOR) {
        init_result = cudaErrorInsufficientDriver;
    } else {
        CUresult r = sim_driver_init();
        init_result = r == CUDA_SUCCESS ? cudaSuccess : sim_rt_from_cu(r);
    }
    return init_result;
}

static cudaError_t finish(sim_call *c, cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        sim_thread()->rt_last = e;
    return (cudaError_t)sim_end(c, (int)e);
}

#define ENTER(name)                                                           \
    pthread_once(&probe_once, probe_driver);                                  \
    sim_call call_;                                                           \
    int inj_ = 0;                                                             \
    if (sim_begin(&call_, SIM_RT, name, &inj_) == 1)                          \
    return finish(&call_, (cudaError_t)inj_)
#define LEAVE(e) return finish(&call_, inj_ ? (cudaError_t)inj_ : (e))
/* Initialise, and get the context the call works in. */
#define NEED_CTX(c)                                                           \
    sim_ctx *c = NULL;                                                        \
    do {                                                                      \
        cudaError_t e_ = rt_init();                                           \
        if (e_ == cudaSuccess)                                                \
            e_ = sim_rt_context(&c);                                          \
        if (e_ != cudaSuccess)                                                \
            LEAVE(e_);                                                        \
    } while (0)

/* ---- versions, errors, devices ---- */

/* The runtime's own constant: like the real one, it neither initialises the
 * runtime nor opens the driver (so a program can ask it with no driver). */
cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion)
{
    sim_call call_;
    int inj_ = 0;
    if (sim_begin(&call_, SIM_RT, "cudaRuntimeGetVersion", &inj_) == 1)
        return finish(&call_, (cudaError_t)inj_);
    if (!runtimeVersion)
        LEAVE(cudaErrorInvalidValue);
    *runtimeVersion = SIM_RT_VERSION;
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion)
{
    ENTER("cudaDriverGetVersion");
    if (!driverVersion)
        LEAVE(cudaErrorInvalidValue);
    *driverVersion = driver_present ? sim.cfg.driver_version : 0;
    LEAVE(cudaSuccess);
}

const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    pthread_once(&probe_once, probe_driver);
    sim_call c;
    sim_begin(&c, SIM_RT, "cudaGetErrorName", NULL);
    const char *s = sim_rt_name(error);
    if (s && sim.cfg.error_name[0])
        s = sim.cfg.error_name;
    sim_end(&c, 0);
    return s ? s : "unrecognized error code";
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    pthread_once(&probe_once, probe_driver);
    sim_call c;
    sim_begin(&c, SIM_RT, "cudaGetErrorString", NULL);
    const char *s = !sim_rt_name(error)       ? "unrecognized error code"
                    : sim.cfg.error_text[0] ? sim.cfg.error_text
                                            : sim_rt_string(error);
    sim_end(&c, 0);
    return s;
}

static cudaError_t last_error(const char *name, int clear)
{
    pthread_once(&probe_once, probe_driver);
    sim_call c;
    sim_begin(&c, SIM_RT, name, NULL);
    sim_tls *t = sim_thread();
    cudaError_t e = t->rt_last;
    if (clear)
        t->rt_last = cudaSuccess;
    sim_ctx *cur = sim_current();
    if (e == cudaSuccess && cur && cur->active && cur->fault)
        e = cur->fault; /* sticky: never cleared */
    return (cudaError_t)sim_end(&c, (int)e);
}

cudaError_t CUDARTAPI cudaGetLastError(void) { return last_error("cudaGetLastError", 1); }
cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return last_error("cudaPeekAtLastError", 0); }

cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    ENTER("cudaGetDeviceCount");
    if (!count)
        LEAVE(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    *count = e == cudaSuccess ? sim.nvisible : 0;
    LEAVE(e);
}

cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    ENTER("cudaSetDevice");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_unit *u = sim_unit_of(device);
    if (!u)
        LEAVE(cudaErrorInvalidDevice);
    sim_tls *t = sim_thread();
    t->rt_device = device;
    e = sim_rt_adopt(&u->ctx); /* CUDA 12+: the primary context now */
    if (e != cudaSuccess)
        LEAVE(e);
    if (t->depth == 0)
        t->depth = 1;
    t->stack[t->depth - 1] = &u->ctx;
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
    ENTER("cudaGetDevice");
    if (!device)
        LEAVE(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_ctx *c = sim_current();
    *device = c ? sim_ctx_ordinal(c) : sim_thread()->rt_device;
    LEAVE(cudaSuccess);
}

static int attribute(const sim_unit *u, enum cudaDeviceAttr a, int *v)
{
    switch (a) {
    case cudaDevAttrComputeCapabilityMajor: *v = u->cc_major; return 0;
    case cudaDevAttrComputeCapabilityMinor: *v = u->cc_minor; return 0;
    case cudaDevAttrMultiProcessorCount: *v = u->sms; return 0;
    case cudaDevAttrClockRate: *v = u->clock_khz; return 0;
    case cudaDevAttrMemoryClockRate: *v = u->mem_clock_khz; return 0;
    case cudaDevAttrGlobalMemoryBusWidth: *v = u->bus_bits; return 0;
    case cudaDevAttrL2CacheSize: *v = (int)u->l2_bytes; return 0;
    case cudaDevAttrPciBusId: *v = (int)u->pci_bus; return 0;
    case cudaDevAttrPciDeviceId: *v = (int)u->pci_dev; return 0;
    case cudaDevAttrPciDomainId: *v = (int)u->pci_domain; return 0;
    case cudaDevAttrWarpSize: *v = 32; return 0;
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; return 0;
    case cudaDevAttrUnifiedAddressing: *v = 1; return 0;
    case cudaDevAttrIntegrated: *v = 0; return 0;
    default: return -1;
    }
}

cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    ENTER("cudaDeviceGetAttribute");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_unit *u = sim_unit_of(device);
    if (!u)
        LEAVE(cudaErrorInvalidDevice);
    if (!value || (int)attr <= 0 || attr >= cudaDevAttrMax)
        LEAVE(cudaErrorInvalidValue);
    LEAVE(attribute(u, attr, value) == 0 ? cudaSuccess : cudaErrorNotSupported);
}

cudaError_t CUDARTAPI cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    ENTER("cudaDeviceGetPCIBusId");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_unit *u = sim_unit_of(device);
    if (!u)
        LEAVE(cudaErrorInvalidDevice);
    if (!pciBusId || len <= 0)
        LEAVE(cudaErrorInvalidValue);
    snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.%X", u->pci_domain, u->pci_bus,
             u->pci_dev, u->pci_fn);
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    ENTER("cudaDeviceSynchronize");
    NEED_CTX(c);
    sim_run_ctx(c);
    LEAVE(c->fault);
}

cudaError_t CUDARTAPI cudaDeviceReset(void)
{
    ENTER("cudaDeviceReset");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_tls *t = sim_thread();
    sim_ctx *c = sim_current();
    sim_unit *u = c ? c->unit : sim_unit_of(t->rt_device);
    if (u && u->ctx.active)
        sim_ctx_destroy(&u->ctx); /* every reference, the runtime's too */
    LEAVE(cudaSuccess);
}

/* ---- memory ---- */

cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    ENTER("cudaMemGetInfo");
    if (!free_bytes || !total)
        LEAVE(cudaErrorInvalidValue);
    NEED_CTX(c);
    *free_bytes = (size_t)sim_unit_free(c->unit);
    *total = (size_t)c->unit->total;
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size)
{
    ENTER("cudaMalloc");
    if (!devPtr)
        LEAVE(cudaErrorInvalidValue);
    NEED_CTX(c);
    if (size == 0) {
        *devPtr = NULL;
        LEAVE(cudaSuccess);
    }
    sim_alloc *a = NULL;
    cudaError_t e = sim_dev_alloc(c, size, SIM_TAG_USER, &a);
    if (e == cudaSuccess)
        *devPtr = (void *)a->dev;
    LEAVE(e);
}

cudaError_t CUDARTAPI cudaFree(void *devPtr)
{
    ENTER("cudaFree");
    NEED_CTX(c);
    if (!devPtr)
        LEAVE(cudaSuccess);
    sim_alloc *a = sim_dev_find_base((uintptr_t)devPtr);
    if (!a || a->tag != SIM_TAG_USER)
        LEAVE(cudaErrorInvalidValue);
    sim_run_ctx(a->ctx); /* cudaFree synchronises */
    if (a->ctx->fault)
        LEAVE(a->ctx->fault);
    sim_dev_free(a);
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaMallocHost(void **ptr, size_t size)
{
    ENTER("cudaMallocHost");
    if (!ptr)
        LEAVE(cudaErrorInvalidValue);
    NEED_CTX(c);
    (void)c;
    LEAVE(sim_host_alloc(size, ptr));
}

cudaError_t CUDARTAPI cudaFreeHost(void *ptr)
{
    ENTER("cudaFreeHost");
    NEED_CTX(c);
    (void)c;
    if (!ptr)
        LEAVE(cudaSuccess);
    sim_alloc *a = sim_host_find_base((uintptr_t)ptr);
    if (!a)
        LEAVE(cudaErrorInvalidValue);
    sim_run_all(); /* queued copies may still use it */
    sim_host_free(a);
    LEAVE(cudaSuccess);
}

/* Where a pointer of a copy points: 1 device (the range inside one
 * allocation), 0 host, -1 a device address whose range overruns its
 * allocation. */
static int classify(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (sim_dev_find(a, n))
        return 1;
    if (sim_dev_find(a, 0))
        return -1;
    return 0;
}

/* The modelled time of a copy of n bytes: 2 us, then device to device at
 * the memory's rate (n read and n written), across the host link at its
 * rate for pinned or pageable host memory, scaled down when the link runs
 * below its maximum generation or width; host to host at the link's. */
static double copy_cost(const sim_unit *u, size_t n, int dd, int sd, int pageable)
{
    double bytes = (double)n;
    if (dd && sd)
        return 2e-6 + 2.0 * bytes / (u->memory_gbps * 1e9);
    if (!dd && !sd)
        return 2e-6 + bytes / (u->copy_gbps * 1e9);
    double rate = (pageable ? u->pageable_gbps : u->copy_gbps) * sim_link_factor(u);
    return 2e-6 + bytes / (rate * 1e9);
}

static cudaError_t copy(const char *name, sim_ctx *c, void *dst, const void *src, size_t n,
                        enum cudaMemcpyKind kind, sim_stream *s, int sync)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (n == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    int dd = classify(dst, n), sd = classify(src, n);
    if (dd < 0 || sd < 0)
        return cudaErrorInvalidValue;
    static const int want[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}}; /* {src, dst} */
    if (kind != cudaMemcpyDefault && (want[kind][0] != sd || want[kind][1] != dd))
        return cudaErrorInvalidValue;
    sim_op op;
    memset(&op, 0, sizeof op);
    op.kind = OP_COPY;
    op.u.copy.dst = (uintptr_t)dst;
    op.u.copy.src = (uintptr_t)src;
    op.u.copy.dst_dev = dd;
    op.u.copy.src_dev = sd;
    op.u.copy.n = n;
    op.fault = name && sim_async_fault(name);
    int pageable_src = !sd && !sim_host_find((uintptr_t)src, n);
    int pageable_dst = !dd && !sim_host_find((uintptr_t)dst, n);
    op.cost_s = copy_cost(c->unit, n, dd, sd, pageable_src || pageable_dst);
    if (pageable_src && sim.cfg.deferred) {
        /* Staged at the call: the caller may reuse its buffer at once. */
        op.u.copy.snapshot = malloc(n);
        if (!op.u.copy.snapshot)
            return cudaErrorMemoryAllocation;
        memcpy(op.u.copy.snapshot, src, n);
    }
    cudaError_t e = sim_enqueue(s, &op);
    if (e != cudaSuccess) {
        free(op.u.copy.snapshot);
        return e;
    }
    if (sync || pageable_dst)
        sim_run_stream(s, NULL);
    return sync || pageable_dst ? s->ctx->fault : cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    ENTER("cudaMemcpy");
    NEED_CTX(c);
    sim_run_ctx(c); /* the legacy stream waits for earlier work */
    LEAVE(copy(NULL, c, dst, src, count, kind, &c->null_stream, 1));
}

/* The stream of an async call: a live stream of the current context. */
static cudaError_t stream_of(sim_ctx *c, cudaStream_t stream, sim_stream **out)
{
    sim_stream *s = sim_stream_lookup(stream, c);
    if (!s || s->ctx != c)
        return cudaErrorInvalidResourceHandle;
    *out = s;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    ENTER("cudaMemcpyAsync");
    NEED_CTX(c);
    sim_stream *s = NULL;
    cudaError_t e = stream_of(c, stream, &s);
    if (e == cudaSuccess)
        e = copy("cudaMemcpyAsync", c, dst, src, count, kind, s, 0);
    LEAVE(e);
}

static cudaError_t set(const char *name, sim_ctx *c, void *p, int value, size_t n, sim_stream *s)
{
    if (n == 0)
        return cudaSuccess;
    sim_alloc *a = sim_dev_find((uintptr_t)p, n);
    if (!a || a->ctx->unit != c->unit)
        return cudaErrorInvalidValue;
    sim_op op;
    memset(&op, 0, sizeof op);
    op.kind = OP_MEMSET;
    op.u.set.dst = (uintptr_t)p;
    op.u.set.value = value;
    op.u.set.n = n;
    op.cost_s = 2e-6 + (double)n / (c->unit->memory_gbps * 1e9);
    op.fault = name && sim_async_fault(name);
    return sim_enqueue(s, &op);
}

cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count)
{
    ENTER("cudaMemset");
    NEED_CTX(c);
    cudaError_t e = set(NULL, c, devPtr, value, count, &c->null_stream);
    if (e == cudaSuccess) {
        sim_run_ctx(c);
        e = c->fault;
    }
    LEAVE(e);
}

cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    ENTER("cudaMemsetAsync");
    NEED_CTX(c);
    sim_stream *s = NULL;
    cudaError_t e = stream_of(c, stream, &s);
    if (e == cudaSuccess)
        e = set("cudaMemsetAsync", c, devPtr, value, count, s);
    LEAVE(e);
}

/* ---- streams ---- */

static cudaError_t stream_create(sim_ctx *c, cudaStream_t *out, unsigned flags)
{
    if (!out || (flags & ~(unsigned)cudaStreamNonBlocking))
        return cudaErrorInvalidValue;
    sim_stream *s = sim_stream_new(c, flags);
    if (!s)
        return cudaErrorMemoryAllocation;
    *out = (cudaStream_t)(void *)s;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
    ENTER("cudaStreamCreate");
    NEED_CTX(c);
    LEAVE(stream_create(c, pStream, 0));
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    ENTER("cudaStreamCreateWithFlags");
    NEED_CTX(c);
    LEAVE(stream_create(c, pStream, flags));
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
    ENTER("cudaStreamDestroy");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_stream *s = (uintptr_t)stream <= 2 ? NULL : sim_stream_lookup(stream, NULL);
    if (!s)
        LEAVE(cudaErrorInvalidResourceHandle);
    sim_ctx *c = s->ctx;
    sim_run_stream(s, NULL); /* queued work still completes */
    sim_stream_free(s);
    LEAVE(c->fault);
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
    ENTER("cudaStreamSynchronize");
    NEED_CTX(c);
    sim_stream *s = sim_stream_lookup(stream, c);
    if (!s)
        LEAVE(cudaErrorInvalidResourceHandle);
    sim_run_stream(s, NULL);
    LEAVE(s->ctx->fault);
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream)
{
    ENTER("cudaStreamQuery");
    NEED_CTX(c);
    sim_stream *s = sim_stream_lookup(stream, c);
    if (!s)
        LEAVE(cudaErrorInvalidResourceHandle);
    if (s->head && !s->ctx->fault) {
        sim_run_one(s); /* polling makes progress */
        LEAVE(s->ctx->fault ? s->ctx->fault : cudaErrorNotReady);
    }
    LEAVE(s->ctx->fault);
}

/* ---- events ---- */

static cudaError_t event_create(sim_ctx *c, cudaEvent_t *out, unsigned flags)
{
    unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!out || (flags & ~known) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return cudaErrorInvalidValue;
    sim_event *e = sim_event_new(c, flags);
    if (!e)
        return cudaErrorMemoryAllocation;
    *out = (cudaEvent_t)(void *)e;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
    ENTER("cudaEventCreate");
    NEED_CTX(c);
    LEAVE(event_create(c, event, 0));
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    ENTER("cudaEventCreateWithFlags");
    NEED_CTX(c);
    LEAVE(event_create(c, event, flags));
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    ENTER("cudaEventRecord");
    NEED_CTX(c);
    sim_event *ev = sim_event_lookup(event);
    sim_stream *s = NULL;
    if (!ev || stream_of(c, stream, &s) != cudaSuccess || ev->ctx != c)
        LEAVE(cudaErrorInvalidResourceHandle);
    sim_op op;
    memset(&op, 0, sizeof op);
    op.kind = OP_EVENT;
    op.u.event.ev = ev;
    op.u.event.seq = ++sim.event_seq;
    LEAVE(sim_enqueue(s, &op));
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event)
{
    ENTER("cudaEventQuery");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_event *ev = sim_event_lookup(event);
    if (!ev)
        LEAVE(cudaErrorInvalidResourceHandle);
    if (ev->ctx->fault)
        LEAVE(ev->ctx->fault);
    sim_stream *s = NULL;
    if (sim_event_op(ev, &s)) {
        sim_run_one(s); /* polling makes progress */
        if (ev->ctx->fault)
            LEAVE(ev->ctx->fault);
        LEAVE(ev->done_seq == ev->rec_seq ? cudaSuccess : cudaErrorNotReady);
    }
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    ENTER("cudaEventSynchronize");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_event *ev = sim_event_lookup(event);
    if (!ev)
        LEAVE(cudaErrorInvalidResourceHandle);
    sim_stream *s = NULL;
    const sim_op *op = sim_event_op(ev, &s);
    if (op)
        sim_run_stream(s, op);
    LEAVE(ev->ctx->fault);
}

cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    ENTER("cudaEventElapsedTime");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    if (!ms)
        LEAVE(cudaErrorInvalidValue);
    sim_event *a = sim_event_lookup(start), *b = sim_event_lookup(end);
    if (!a || !b || a->rec_seq == 0 || b->rec_seq == 0 ||
        ((a->flags | b->flags) & cudaEventDisableTiming) || a->ctx != b->ctx)
        LEAVE(cudaErrorInvalidResourceHandle);
    if (a->ctx->fault)
        LEAVE(a->ctx->fault);
    if (a->done_seq != a->rec_seq || b->done_seq != b->rec_seq)
        LEAVE(cudaErrorNotReady);
    *ms = (float)((b->time_s - a->time_s) * 1000.0);
    LEAVE(cudaSuccess);
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event)
{
    ENTER("cudaEventDestroy");
    cudaError_t e = rt_init();
    if (e != cudaSuccess)
        LEAVE(e);
    sim_event *ev = sim_event_lookup(event);
    if (!ev)
        LEAVE(cudaErrorInvalidResourceHandle);
    sim_event_free(ev);
    LEAVE(cudaSuccess);
}
