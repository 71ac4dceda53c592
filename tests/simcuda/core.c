/*
 * core.c - the state of the simulated NVIDIA stack (libsimcuda.so): the
 * fleet, CUDA_VISIBLE_DEVICES, primary contexts and the per-thread context
 * stack, device and pinned memory, streams, events and the work queued on
 * them, injected failures, the call log, and the simcuda_* control API.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

sim_state sim = {.logfd = -1};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local sim_tls tls;
static char last_error[512];

#define LOG_MAX ((size_t)1 << 22)

static void set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

sim_tls *sim_thread(void)
{
    if (tls.id == 0)
        tls.id = ++sim.next_thread;
    if (tls.gen != sim.gen) {
        tls.gen = sim.gen;
        tls.depth = 0;
        tls.rt_device = 0;
        tls.rt_last = cudaSuccess;
    }
    return &tls;
}

/* ---- configuration, teardown ---------------------------------------------- */

static void teardown(void)
{
    for (int i = 0; i < sim.cfg.nunits; i++)
        if (sim.cfg.units[i].ctx.active)
            sim_ctx_destroy(&sim.cfg.units[i].ctx);
    while (sim.allocs)
        sim_dev_free(sim.allocs);
    while (sim.pinned)
        sim_host_free(sim.pinned);
    while (sim.handles) {
        sim_blas *h = sim.handles;
        sim.handles = h->next;
        free(h);
    }
    sim.nlog = 0;
}

/* Install cfg as the new state (lock held). */
static void install(const sim_config *cfg)
{
    teardown();
    sim.cfg = *cfg;
    for (int i = 0; i < sim.cfg.nunits; i++) {
        sim_unit *u = &sim.cfg.units[i];
        memset(&u->ctx, 0, sizeof u->ctx);
        u->ctx.unit = u;
        u->alloc_bytes = 0;
        u->nallocs = u->nworkspaces = 0;
        u->clock_s = 1.0;
        u->ordinal = -1;
        u->contexts_created = 0;
        u->bytes_allocated = 0;
    }
    sim.drv_init_done = 0;
    sim.drv_init_result = CUDA_ERROR_NOT_INITIALIZED;
    sim.nvisible = 0;
    sim.nvml_refs = 0;
    sim.fired = 0;
    sim.seq = 0;
    sim.gen++;
    sim.configured = 1;
}

static char *read_text_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        set_error("cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (len + 1 == cap) {
            char *grown = cap < ((size_t)1 << 24) ? realloc(buf, cap * 2) : NULL;
            if (!grown) {
                free(buf);
                buf = NULL;
                set_error("%s is too large", path);
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

static int configure_locked(const char *text)
{
    sim_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        set_error("out of memory");
        return -1;
    }
    char err[256];
    if (sim_config_parse(text, cfg, err, sizeof err) != 0) {
        set_error("%s", err);
        free(cfg);
        return -1;
    }
    install(cfg);
    free(cfg);
    return 0;
}

/* First use in a process configured only through the environment. */
static void ensure_configured(void)
{
    if (sim.configured)
        return;
    const char *logpath = getenv("SIMCUDA_LOG");
    if (logpath && logpath[0] && sim.logfd < 0)
        sim.logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const char *file = getenv("SIMCUDA_CONFIG");
    const char *text = getenv("SIMCUDA_FLEET");
    char *owned = NULL;
    const char *what = "the default fleet";
    if (file && file[0]) {
        owned = read_text_file(file);
        if (!owned) {
            fprintf(stderr, "simcuda: SIMCUDA_CONFIG: %s\n", last_error);
            abort();
        }
        text = owned;
        what = "SIMCUDA_CONFIG";
    } else if (text) {
        what = "SIMCUDA_FLEET";
    } else {
        text = "[gpu]\npreset = H200\n";
    }
    if (configure_locked(text) != 0) {
        fprintf(stderr, "simcuda: %s: %s\n", what, last_error);
        abort();
    }
    free(owned);
}

/* SIMCUDA_STATS: what this process did to the devices, written at exit
 * (a program run whole is checked by it: "no context was created"). */
__attribute__((destructor)) static void write_stats(void)
{
    const char *path = getenv("SIMCUDA_STATS");
    if (!path || !path[0])
        return;
    pthread_mutex_lock(&lock);
    unsigned long contexts = 0;
    uint64_t bytes = 0, context_bytes = 0;
    for (int i = 0; i < sim.cfg.nunits; i++) {
        const sim_unit *u = &sim.cfg.units[i];
        contexts += u->contexts_created;
        bytes += u->bytes_allocated;
        context_bytes += u->contexts_created * sim_ctx_cost(u);
    }
    FILE *f = fopen(path, "we");
    if (f) {
        fprintf(f, "{\"contexts_created\": %lu, \"context_bytes\": %llu, \"bytes_allocated\": %llu, "
                "\"calls\": %lu}\n",
                contexts, (unsigned long long)context_bytes, (unsigned long long)bytes, sim.seq);
        fclose(f);
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the call log and injected failures ------------------------------------- */

static int unit_index(const sim_ctx *c)
{
    return c ? (int)(c->unit - sim.cfg.units) : SIMCUDA_NONE;
}

sim_ctx *sim_current(void)
{
    sim_tls *t = sim_thread();
    return t->depth ? t->stack[t->depth - 1] : NULL;
}

/* The log keeps names of its own: a front end's strings go away if the
 * program unloads that library (the CUDA loader closes a runtime it only
 * asked for its version). */
static const char *intern(const char *func)
{
    static char names[256][64];
    static size_t n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], func) == 0)
            return names[i];
    if (n == sizeof names / sizeof names[0] || strlen(func) >= sizeof names[0])
        return "(unlisted)";
    strcpy(names[n], func);
    return names[n++];
}

static size_t log_add(const char *func, const sim_tls *t)
{
    if (sim.nlog == sim.caplog) {
        if (sim.caplog >= LOG_MAX)
            return (size_t)-1;
        size_t cap = sim.caplog ? sim.caplog * 2 : 1024;
        simcuda_call *grown = realloc(sim.log, cap * sizeof *grown);
        if (!grown)
            return (size_t)-1;
        sim.log = grown;
        sim.caplog = cap;
    }
    simcuda_call *e = &sim.log[sim.nlog];
    memset(e, 0, sizeof *e);
    e->seq = ++sim.seq;
    e->func = intern(func);
    e->thread = t->id;
    e->gpu = unit_index(t->depth ? t->stack[t->depth - 1] : NULL);
    e->gpu_after = e->gpu;
    return sim.nlog++;
}

/* The log's memory goes with the library: a program may unload it (the
 * CUDA loader closes a runtime it only asked for its version, and without
 * a driver nothing else keeps this library mapped), which would leave the
 * buffer unreachable, a leak to LeakSanitizer. */
__attribute__((destructor)) static void free_log(void)
{
    free(sim.log);
    sim.log = NULL;
    sim.nlog = sim.caplog = 0;
}

static const char *code_name(sim_api api, int code)
{
    const char *s = NULL;
    switch (api) {
    case SIM_DRV: s = sim_cu_name((CUresult)code); break;
    case SIM_RT: s = sim_rt_name((cudaError_t)code); break;
    case SIM_BLAS: s = sim_blas_name((cublasStatus_t)code); break;
    case SIM_NVML: s = sim_nvml_name(code); break;
    }
    return s ? s : "?";
}

static void log_write(const simcuda_call *e, sim_api api)
{
    if (sim.logfd < 0)
        return;
    char line[256];
    int n = snprintf(line, sizeof line, "%lu t%d %s gpu=%d/%d %s%s\n", e->seq,
                     e->thread, e->func, e->gpu, e->gpu_after,
                     code_name(api, e->result), e->injected ? " injected" : "");
    if (n > 0) {
        size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
        ssize_t w = write(sim.logfd, line, len);
        (void)w;
    }
}

int sim_begin(sim_call *c, sim_api api, const char *func, int *code)
{
    pthread_mutex_lock(&lock);
    ensure_configured();
    sim_tls *t = sim_thread();
    c->api = api;
    c->entry = log_add(func, t);
    if (!code)
        return 0;
    for (int i = 0; i < sim.cfg.nrules; i++) {
        sim_rule *r = &sim.cfg.rules[i];
        if (r->async || strcmp(r->func, func) != 0)
            continue;
        r->calls++;
        if (r->calls != r->nth && !(r->from && r->calls > r->nth))
            continue;
        *code = r->code ? r->code : sim_default_code(func);
        sim.fired++;
        if (c->entry != (size_t)-1)
            sim.log[c->entry].injected = 1;
        if (r->late)
            return 2; /* the call runs; its end reports the failure */
        sim_ctx *cur = sim_current();
        if (cur && cur->active && !cur->fault) {
            if (api == SIM_RT && sim_rt_sticky((cudaError_t)*code))
                cur->fault = (cudaError_t)*code;
            else if (api == SIM_DRV && sim_rt_sticky(sim_rt_from_cu((CUresult)*code)))
                cur->fault = sim_rt_from_cu((CUresult)*code);
        }
        return 1;
    }
    return 0;
}

int sim_end(sim_call *c, int code)
{
    if (c->entry != (size_t)-1 && c->entry < sim.nlog) {
        simcuda_call *e = &sim.log[c->entry];
        e->result = code;
        e->gpu_after = unit_index(sim_current());
        log_write(e, c->api);
    }
    pthread_mutex_unlock(&lock);
    return code;
}

int sim_async_fault(const char *func)
{
    for (int i = 0; i < sim.cfg.nrules; i++) {
        sim_rule *r = &sim.cfg.rules[i];
        if (!r->async || strcmp(r->func, func) != 0)
            continue;
        if (++r->calls == r->nth)
            return 1;
    }
    return 0;
}

/* ---- devices: CUDA_VISIBLE_DEVICES and the enumeration order ---------------- */

static int pci_less(const sim_unit *a, const sim_unit *b)
{
    if (a->pci_domain != b->pci_domain) return a->pci_domain < b->pci_domain;
    if (a->pci_bus != b->pci_bus) return a->pci_bus < b->pci_bus;
    if (a->pci_dev != b->pci_dev) return a->pci_dev < b->pci_dev;
    return a->pci_fn < b->pci_fn;
}

/* The GPUs (not MIG instances) in the order CUDA numbers them: as
 * configured ("fastest first"), or by PCI bus id when CUDA_DEVICE_ORDER
 * says PCI_BUS_ID. */
static int gpu_order(int *out)
{
    int n = 0;
    for (int i = 0; i < sim.cfg.nunits; i++)
        if (sim.cfg.units[i].parent < 0)
            out[n++] = i;
    const char *order = getenv("CUDA_DEVICE_ORDER");
    if (order && strcmp(order, "PCI_BUS_ID") == 0) {
        for (int i = 1; i < n; i++) /* insertion sort: stable, tiny n */
            for (int j = i; j > 0 && pci_less(&sim.cfg.units[out[j]], &sim.cfg.units[out[j - 1]]); j--) {
                int t = out[j];
                out[j] = out[j - 1];
                out[j - 1] = t;
            }
    }
    return n;
}

static int first_mig(int gpu)
{
    for (int i = gpu + 1; i < sim.cfg.nunits; i++)
        if (sim.cfg.units[i].parent == gpu)
            return i;
    return -1;
}

/* The unit whose UUID starts with `prefix` ("GPU-" or "MIG-" included),
 * if exactly one does; -1 otherwise. `mig` selects instances or GPUs. */
static int uuid_match(const char *prefix, int mig)
{
    int found = -1;
    size_t n = strlen(prefix);
    for (int i = 0; i < sim.cfg.nunits; i++) {
        const sim_unit *u = &sim.cfg.units[i];
        if ((u->parent >= 0) != mig || strlen(u->uuid) < n ||
            strncasecmp(u->uuid, prefix, n) != 0)
            continue;
        if (found >= 0)
            return -1; /* ambiguous */
        found = i;
    }
    return found;
}

static void make_visible(int unit)
{
    sim.cfg.units[unit].ordinal = sim.nvisible;
    sim.visible[sim.nvisible++] = unit;
}

/* Apply CUDA_VISIBLE_DEVICES as CUDA does: a comma-separated list of
 * indices (into the order above), GPU-/MIG- UUIDs or unique prefixes of
 * them, enumerated in the order given; the list ends at the first entry
 * that names no device (or one already listed). An empty value hides
 * every device. A process enumerates at most one MIG device: later MIG
 * entries are passed over. */
static void enumerate(void)
{
    int gpus[SIM_MAX_UNITS];
    int ng = gpu_order(gpus);
    int mig_seen = 0;
    sim.nvisible = 0;
    for (int i = 0; i < sim.cfg.nunits; i++)
        sim.cfg.units[i].ordinal = -1;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (!cvd) {
        for (int i = 0; i < ng; i++) {
            const sim_unit *g = &sim.cfg.units[gpus[i]];
            if (g->nmig == 0) {
                make_visible(gpus[i]);
            } else if (!mig_seen) {
                make_visible(first_mig(gpus[i]));
                mig_seen = 1;
            }
        }
        return;
    }
    const char *p = cvd;
    while (*p) {
        char tok[128];
        size_t len = strcspn(p, ",");
        const char *next = p[len] ? p + len + 1 : p + len;
        while (len && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        if (len == 0 || len >= sizeof tok)
            return;
        memcpy(tok, p, len);
        tok[len] = '\0';
        int unit = -1;
        if (strspn(tok, "0123456789") == len) {
            errno = 0;
            unsigned long idx = strtoul(tok, NULL, 10);
            if (errno == 0 && idx < (unsigned long)ng && sim.cfg.units[gpus[idx]].nmig == 0)
                unit = gpus[idx];
        } else if (strncasecmp(tok, "GPU-", 4) == 0) {
            unit = uuid_match(tok, 0);
            if (unit >= 0 && sim.cfg.units[unit].nmig > 0)
                unit = -1;
        } else if (strncasecmp(tok, "MIG-", 4) == 0) {
            unit = uuid_match(tok, 1);
            if (unit >= 0 && mig_seen) {
                p = next;
                continue;
            }
            if (unit >= 0)
                mig_seen = 1;
        }
        if (unit < 0 || sim.cfg.units[unit].ordinal >= 0)
            return;
        make_visible(unit);
        p = next;
    }
}

CUresult sim_driver_init(void)
{
    if (sim.drv_init_done)
        return sim.drv_init_result;
    sim.drv_init_done = 1;
    enumerate();
    if (sim.cfg.cuinit_error) {
        for (int i = 0; i < sim.nvisible; i++)
            sim.cfg.units[sim.visible[i]].ordinal = -1;
        sim.nvisible = 0;
        sim.drv_init_result = (CUresult)sim.cfg.cuinit_error;
    } else {
        sim.drv_init_result = sim.nvisible ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
    }
    return sim.drv_init_result;
}

sim_unit *sim_unit_of(int ordinal)
{
    if (!sim.drv_init_done || sim.drv_init_result != CUDA_SUCCESS || ordinal < 0 ||
        ordinal >= sim.nvisible)
        return NULL;
    return &sim.cfg.units[sim.visible[ordinal]];
}

/* ---- contexts ------------------------------------------------------------------ */

uint64_t sim_ctx_cost(const sim_unit *u)
{
    return u->ctx_bytes ? u->ctx_bytes : sim.cfg.ctx_bytes;
}

static uint64_t unit_used(const sim_unit *u)
{
    uint64_t used = u->total - u->free0 + u->alloc_bytes;
    for (int i = 0; i < u->nprocs; i++)
        used += u->procs[i].bytes; /* other processes' (0 when not available) */
    if (u->ctx.active)
        used += sim_ctx_cost(u);
    return used;
}

uint64_t sim_unit_free(const sim_unit *u)
{
    uint64_t used = unit_used(u);
    if (u->nmig > 0) /* a MIG-enabled GPU: its instances' use counts too */
        for (int i = 0; i < sim.cfg.nunits; i++)
            if (sim.cfg.units[i].parent == (int)(u - sim.cfg.units)) {
                const sim_unit *m = &sim.cfg.units[i];
                used += unit_used(m) - (m->total - m->free0);
            }
    return used >= u->total ? 0 : u->total - used;
}

int sim_ctx_valid(const void *handle)
{
    for (int i = 0; i < sim.cfg.nunits; i++)
        if (handle == (const void *)&sim.cfg.units[i].ctx)
            return 1;
    return 0;
}

int sim_ctx_ordinal(const sim_ctx *ctx)
{
    return ctx ? ctx->unit->ordinal : -1;
}

CUresult sim_ctx_retain(sim_unit *u)
{
    sim_ctx *c = &u->ctx;
    if (!c->active) {
        if (sim_unit_free(u) < sim_ctx_cost(u))
            return CUDA_ERROR_OUT_OF_MEMORY;
        memset(c, 0, sizeof *c);
        c->unit = u;
        c->active = 1;
        c->null_stream.ctx = c;
        u->contexts_created++;
        if (sim.cfg.context_ms > 0) {
            /* A driver without persistence mode brings the GPU up with
             * its first context: seconds, in real time. */
            struct timespec d = {sim.cfg.context_ms / 1000, (long)(sim.cfg.context_ms % 1000) * 1000000L};
            while (nanosleep(&d, &d) != 0 && errno == EINTR)
                ;
        }
    }
    c->refs++;
    return CUDA_SUCCESS;
}

CUresult sim_ctx_release(sim_unit *u)
{
    sim_ctx *c = &u->ctx;
    if (!c->active || c->refs == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (--c->refs == 0)
        sim_ctx_destroy(c);
    return CUDA_SUCCESS;
}

static void free_ops(sim_stream *s)
{
    while (s->head) {
        sim_op *o = s->head;
        s->head = o->next;
        if (o->kind == OP_COPY)
            free(o->u.copy.snapshot);
        free(o);
    }
    s->tail = NULL;
    s->pending = 0;
}

void sim_ctx_destroy(sim_ctx *c)
{
    free_ops(&c->null_stream);
    while (c->streams)
        sim_stream_free(c->streams);
    while (c->events)
        sim_event_free(c->events);
    sim_blas_orphan(c);
    for (sim_alloc *a = sim.allocs, *next; a; a = next) {
        next = a->next;
        if (a->ctx == c)
            sim_dev_free(a);
    }
    sim_unit *u = c->unit;
    memset(c, 0, sizeof *c);
    c->unit = u;
}

cudaError_t sim_rt_adopt(sim_ctx *c)
{
    if (c->active && c->rt_ref)
        return cudaSuccess;
    CUresult r = sim_ctx_retain(c->unit);
    if (r != CUDA_SUCCESS)
        return sim_rt_from_cu(r);
    c->rt_ref = 1;
    return cudaSuccess;
}

cudaError_t sim_rt_context(sim_ctx **out)
{
    sim_tls *t = sim_thread();
    sim_ctx *c = t->depth ? t->stack[t->depth - 1] : NULL;
    if (c) {
        /* A primary context destroyed under the thread (cudaDeviceReset,
         * the last release) is initialised again, as CUDA does. */
        cudaError_t e = sim_rt_adopt(c);
        if (e != cudaSuccess)
            return e;
    } else {
        sim_unit *u = sim_unit_of(t->rt_device);
        if (!u)
            return cudaErrorInvalidDevice;
        c = &u->ctx;
        cudaError_t e = sim_rt_adopt(c);
        if (e != cudaSuccess)
            return e;
        t->stack[t->depth++] = c; /* the stack was empty */
    }
    if (c->fault)
        return c->fault;
    *out = c;
    return cudaSuccess;
}

/* ---- memory ----------------------------------------------------------------------- */

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (n == 0)
        return pg;
    return n > SIZE_MAX - pg ? 0 : (n + pg - 1) / pg * pg;
}

/* An allocation takes whole 2 MiB pages of device memory (the driver maps
 * it so; it packs small allocations into shared pages, which is not
 * simulated: each takes pages of its own), and succeeds only when they fit
 * in the free memory less what the driver keeps back (alloc_reserve):
 * cuMemGetInfo counts that as free, but no allocation gets it. */
cudaError_t sim_dev_alloc(sim_ctx *ctx, size_t size, sim_tag tag, sim_alloc **out)
{
    sim_unit *u = ctx->unit;
    if (size > UINT64_MAX - SIM_PAGE)
        return cudaErrorMemoryAllocation;
    uint64_t charge = ((uint64_t)size + SIM_PAGE - 1) / SIM_PAGE * SIM_PAGE;
    uint64_t room = sim_unit_free(u);
    room = room > u->alloc_reserve ? room - u->alloc_reserve : 0;
    if (charge > room)
        return cudaErrorMemoryAllocation;
    size_t map = page_round(size);
    if (map == 0)
        return cudaErrorMemoryAllocation;
    void *dev = mmap(NULL, map, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *mem = mmap(NULL, map, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    sim_alloc *a = calloc(1, sizeof *a);
    if (dev == MAP_FAILED || mem == MAP_FAILED || !a) {
        fprintf(stderr, "simcuda: cannot map %zu bytes of host memory to back a "
                        "simulated device allocation\n", size);
        if (dev != MAP_FAILED)
            munmap(dev, map);
        if (mem != MAP_FAILED)
            munmap(mem, map);
        free(a);
        return cudaErrorMemoryAllocation;
    }
    a->dev = (uintptr_t)dev;
    a->mem = mem;
    a->size = size;
    a->map_size = map;
    a->charge = charge;
    a->ctx = ctx;
    a->tag = tag;
    a->version = ++sim.versions;
    a->next = sim.allocs;
    sim.allocs = a;
    u->alloc_bytes += charge;
    u->bytes_allocated += charge;
    u->nallocs++;
    if (tag == SIM_TAG_WORKSPACE)
        u->nworkspaces++;
    *out = a;
    return cudaSuccess;
}

static void unlink_alloc(sim_alloc **list, sim_alloc *a)
{
    for (sim_alloc **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            return;
        }
}

void sim_dev_free(sim_alloc *a)
{
    unlink_alloc(&sim.allocs, a);
    sim_unit *u = a->ctx->unit;
    u->alloc_bytes -= a->charge;
    u->nallocs--;
    if (a->tag == SIM_TAG_WORKSPACE)
        u->nworkspaces--;
    munmap((void *)a->dev, a->map_size);
    munmap(a->mem, a->map_size);
    free(a);
}

static sim_alloc *find_in(sim_alloc *list, uintptr_t addr, size_t len)
{
    for (sim_alloc *a = list; a; a = a->next)
        if (addr >= a->dev && addr - a->dev <= a->size && len <= a->size - (addr - a->dev))
            return a;
    return NULL;
}

sim_alloc *sim_dev_find(uintptr_t addr, size_t len) { return find_in(sim.allocs, addr, len); }

sim_alloc *sim_dev_find_base(uintptr_t addr)
{
    for (sim_alloc *a = sim.allocs; a; a = a->next)
        if (a->dev == addr)
            return a;
    return NULL;
}

cudaError_t sim_host_alloc(size_t size, void **out)
{
    sim_alloc *a = calloc(1, sizeof *a);
    /* malloc'd, so that sanitizers see overruns of pinned buffers. */
    unsigned char *mem = malloc(size ? size : 1);
    if (!a || !mem) {
        free(a);
        free(mem);
        return cudaErrorMemoryAllocation;
    }
    a->dev = (uintptr_t)mem;
    a->mem = mem;
    a->size = size;
    a->next = sim.pinned;
    sim.pinned = a;
    *out = mem;
    return cudaSuccess;
}

sim_alloc *sim_host_find(uintptr_t addr, size_t len) { return find_in(sim.pinned, addr, len); }

sim_alloc *sim_host_find_base(uintptr_t addr)
{
    for (sim_alloc *a = sim.pinned; a; a = a->next)
        if (a->dev == addr)
            return a;
    return NULL;
}

void sim_host_free(sim_alloc *a)
{
    unlink_alloc(&sim.pinned, a);
    free(a->mem);
    free(a);
}

/* ---- streams and events ----------------------------------------------------------- */

sim_stream *sim_stream_new(sim_ctx *ctx, unsigned flags)
{
    sim_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->flags = flags;
    s->next = ctx->streams;
    ctx->streams = s;
    return s;
}

sim_stream *sim_stream_lookup(const void *handle, sim_ctx *ctx)
{
    /* NULL, cudaStreamLegacy (0x1) and cudaStreamPerThread (0x2): the
     * context's legacy default stream. */
    if ((uintptr_t)handle <= 2)
        return ctx ? &ctx->null_stream : NULL;
    for (int i = 0; i < sim.cfg.nunits; i++) {
        sim_ctx *c = &sim.cfg.units[i].ctx;
        if (!c->active)
            continue;
        for (sim_stream *s = c->streams; s; s = s->next)
            if ((const void *)s == handle)
                return s;
    }
    return NULL;
}

void sim_stream_free(sim_stream *s)
{
    free_ops(s);
    for (sim_stream **pp = &s->ctx->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    free(s);
}

sim_event *sim_event_new(sim_ctx *ctx, unsigned flags)
{
    sim_event *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->ctx = ctx;
    e->flags = flags;
    e->next = ctx->events;
    ctx->events = e;
    return e;
}

sim_event *sim_event_lookup(const void *handle)
{
    if (!handle)
        return NULL;
    for (int i = 0; i < sim.cfg.nunits; i++) {
        sim_ctx *c = &sim.cfg.units[i].ctx;
        if (!c->active)
            continue;
        for (sim_event *e = c->events; e; e = e->next)
            if ((const void *)e == handle)
                return e;
    }
    return NULL;
}

static void forget_event(sim_stream *s, const sim_event *e)
{
    for (sim_op *o = s->head; o; o = o->next)
        if (o->kind == OP_EVENT && o->u.event.ev == e)
            o->u.event.ev = NULL;
}

void sim_event_free(sim_event *e)
{
    sim_ctx *c = e->ctx;
    forget_event(&c->null_stream, e);
    for (sim_stream *s = c->streams; s; s = s->next)
        forget_event(s, e);
    for (sim_event **pp = &c->events; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    free(e);
}

const sim_op *sim_event_op(const sim_event *e, sim_stream **where)
{
    if (e->rec_seq == 0 || e->done_seq == e->rec_seq)
        return NULL;
    sim_ctx *c = e->ctx;
    sim_stream *s = &c->null_stream;
    while (s) {
        for (const sim_op *o = s->head; o; o = o->next)
            if (o->kind == OP_EVENT && o->u.event.ev == e && o->u.event.seq == e->rec_seq) {
                *where = s;
                return o;
            }
        s = s == &c->null_stream ? c->streams : s->next;
    }
    return NULL;
}

/* ---- execution ------------------------------------------------------------------------ */

/* Host or device bytes an op reads or writes; NULL when a device range is
 * not (or no longer) inside one allocation. */
static unsigned char *resolve(uintptr_t addr, int dev, size_t n)
{
    if (!dev)
        return (unsigned char *)addr;
    sim_alloc *a = sim_dev_find(addr, n);
    return a ? a->mem + (addr - a->dev) : NULL;
}

static void exec_op(sim_stream *s, sim_op *o)
{
    sim_ctx *c = s->ctx;
    if (c->fault)
        return; /* a faulted context runs nothing more */
    if (o->fault) {
        c->fault = cudaErrorIllegalAddress;
        sim.fired++;
        return;
    }
    int bad = 0;
    switch (o->kind) {
    case OP_COPY: {
        unsigned char *d = resolve(o->u.copy.dst, o->u.copy.dst_dev, o->u.copy.n);
        const unsigned char *src = o->u.copy.snapshot
                                       ? o->u.copy.snapshot
                                       : resolve(o->u.copy.src, o->u.copy.src_dev, o->u.copy.n);
        if (!d || !src)
            bad = 1;
        else if (o->u.copy.n)
            memmove(d, src, o->u.copy.n);
        if (!bad && o->u.copy.dst_dev)
            sim_dev_find(o->u.copy.dst, o->u.copy.n)->version = ++sim.versions;
        break;
    }
    case OP_MEMSET: {
        sim_alloc *a = sim_dev_find(o->u.set.dst, o->u.set.n);
        if (!a || a->ctx->unit != c->unit)
            bad = 1;
        else
        {
            memset(a->mem + (o->u.set.dst - a->dev), o->u.set.value, o->u.set.n);
            a->version = ++sim.versions;
        }
        break;
    }
    case OP_GEMM:
        bad = sim_gemm_exec(&o->u.gemm, c, sim.cfg.gemm_bug) != 0;
        break;
    case OP_DOT:
        bad = sim_dot_exec(&o->u.dot, c) != 0;
        break;
    case OP_EVENT: {
        sim_event *e = o->u.event.ev;
        if (e && e->rec_seq == o->u.event.seq) {
            e->done_seq = o->u.event.seq;
            e->time_s = c->unit->clock_s;
        }
        break;
    }
    }
    if (bad) {
        /* An access outside any allocation of the device: on a GPU, an
         * asynchronous illegal-address fault that poisons the context. */
        c->fault = cudaErrorIllegalAddress;
        return;
    }
    c->unit->clock_s += o->cost_s;
}

static void pop_exec(sim_stream *s)
{
    sim_op *o = s->head;
    s->head = o->next;
    if (!s->head)
        s->tail = NULL;
    s->pending--;
    exec_op(s, o);
    if (o->kind == OP_COPY)
        free(o->u.copy.snapshot);
    free(o);
}

void sim_run_stream(sim_stream *s, const sim_op *upto)
{
    while (s->head) {
        int last = s->head == upto;
        pop_exec(s);
        if (last)
            break;
    }
}

void sim_run_one(sim_stream *s)
{
    if (s->head)
        pop_exec(s);
}

void sim_run_ctx(sim_ctx *c)
{
    sim_run_stream(&c->null_stream, NULL);
    for (sim_stream *s = c->streams; s; s = s->next)
        sim_run_stream(s, NULL);
}

void sim_run_all(void)
{
    for (int i = 0; i < sim.cfg.nunits; i++)
        if (sim.cfg.units[i].ctx.active)
            sim_run_ctx(&sim.cfg.units[i].ctx);
}

int sim_unit_busy(const sim_unit *u)
{
    const sim_ctx *c = &u->ctx;
    if (!c->active)
        return 0;
    if (c->null_stream.head)
        return 1;
    for (const sim_stream *s = c->streams; s; s = s->next)
        if (s->head)
            return 1;
    return 0;
}

/* GB/s of one lane, after line encoding (8b/10b to 2.0, 128b/130b from
 * 3.0, none from 6.0). */
static double lane_gbps(int gen)
{
    static const double rate[] = {0, 0.25, 0.5, 8.0 * 128 / 130 / 8, 16.0 * 128 / 130 / 8,
                                  32.0 * 128 / 130 / 8, 8.0, 16.0};
    return gen > 0 && gen < (int)(sizeof rate / sizeof rate[0]) ? rate[gen] : 0.0;
}

double sim_link_factor(const sim_unit *u)
{
    const sim_unit *g = u->parent >= 0 ? &sim.cfg.units[u->parent] : u;
    double now = lane_gbps(g->pcie_gen) * g->pcie_width;
    double best = lane_gbps(g->pcie_max_gen) * g->pcie_max_width;
    return best > 0 && now > 0 && now < best ? now / best : 1.0;
}

cudaError_t sim_enqueue(sim_stream *s, const sim_op *op)
{
    sim_op *o = malloc(sizeof *o);
    if (!o)
        return cudaErrorMemoryAllocation;
    *o = *op;
    o->next = NULL;
    if (o->kind == OP_EVENT)
        o->u.event.ev->rec_seq = o->u.event.seq;
    if (!sim.cfg.deferred) {
        sim_run_stream(s, NULL); /* left over from deferred mode */
        exec_op(s, o);
        if (o->kind == OP_COPY)
            free(o->u.copy.snapshot);
        free(o);
        return cudaSuccess;
    }
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    s->pending++;
    return cudaSuccess;
}

void sim_blas_orphan(sim_ctx *c)
{
    for (sim_blas *h = sim.handles; h; h = h->next)
        if (h->ctx == c) {
            h->ctx = NULL;       /* its context is gone: unusable */
            h->stream = NULL;
            h->workspace = NULL; /* freed with the context's memory */
        }
}

/* ---- the control API ------------------------------------------------------------------ */

#define CONTROL_BEGIN()                                                       \
    pthread_mutex_lock(&lock);                                                \
    ensure_configured()
#define CONTROL_END() pthread_mutex_unlock(&lock)

SIM_EXPORT int simcuda_configure(const char *text)
{
    pthread_mutex_lock(&lock);
    if (!sim.configured) {
        const char *logpath = getenv("SIMCUDA_LOG");
        if (logpath && logpath[0] && sim.logfd < 0)
            sim.logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    int r = text ? configure_locked(text) : -1;
    if (!text)
        set_error("no configuration text");
    pthread_mutex_unlock(&lock);
    return r;
}

SIM_EXPORT int simcuda_configure_file(const char *path)
{
    char *text = read_text_file(path);
    if (!text)
        return -1;
    int r = simcuda_configure(text);
    free(text);
    return r;
}

SIM_EXPORT const char *simcuda_error(void) { return last_error; }

SIM_EXPORT int simcuda_set(const char *line)
{
    CONTROL_BEGIN();
    char err[256];
    int r = sim_config_line(line ? line : "", &sim.cfg, err, sizeof err);
    if (r != 0)
        set_error("%s", err);
    CONTROL_END();
    return r;
}

SIM_EXPORT int simcuda_fail(const char *func, unsigned long nth, int code, unsigned flags)
{
    CONTROL_BEGIN();
    int r = -1;
    if (!func || !func[0] || strlen(func) >= sizeof sim.cfg.rules[0].func || nth == 0)
        set_error("simcuda_fail: bad function name or nth");
    else if (sim.cfg.nrules == SIM_MAX_RULES)
        set_error("simcuda_fail: at most %d rules", SIM_MAX_RULES);
    else {
        sim_rule *rule = &sim.cfg.rules[sim.cfg.nrules++];
        memset(rule, 0, sizeof *rule);
        strcpy(rule->func, func);
        rule->nth = nth;
        rule->code = code;
        rule->from = (flags & SIMCUDA_FROM) != 0;
        rule->late = (flags & SIMCUDA_LATE) != 0;
        r = 0;
    }
    CONTROL_END();
    return r;
}

SIM_EXPORT int simcuda_fault_async(const char *func, unsigned long nth)
{
    CONTROL_BEGIN();
    int r = -1;
    if (!func || (strcmp(func, "cublasGemmEx") != 0 && strcmp(func, "cudaMemcpyAsync") != 0 &&
                  strcmp(func, "cudaMemsetAsync") != 0) || nth == 0)
        set_error("simcuda_fault_async: cublasGemmEx, cudaMemcpyAsync or cudaMemsetAsync, nth >= 1");
    else if (sim.cfg.nrules == SIM_MAX_RULES)
        set_error("simcuda_fault_async: at most %d rules", SIM_MAX_RULES);
    else {
        sim_rule *rule = &sim.cfg.rules[sim.cfg.nrules++];
        memset(rule, 0, sizeof *rule);
        strcpy(rule->func, func);
        rule->nth = nth;
        rule->async = 1;
        r = 0;
    }
    CONTROL_END();
    return r;
}

SIM_EXPORT void simcuda_clear_faults(void)
{
    CONTROL_BEGIN();
    sim.cfg.nrules = 0;
    CONTROL_END();
}

SIM_EXPORT unsigned long simcuda_faults_fired(void)
{
    CONTROL_BEGIN();
    unsigned long n = sim.fired;
    CONTROL_END();
    return n;
}

SIM_EXPORT size_t simcuda_log_size(void)
{
    CONTROL_BEGIN();
    size_t n = sim.nlog;
    CONTROL_END();
    return n;
}

SIM_EXPORT int simcuda_log_entry(size_t i, simcuda_call *out)
{
    CONTROL_BEGIN();
    int r = -1;
    if (out && i < sim.nlog) {
        *out = sim.log[i];
        r = 0;
    }
    CONTROL_END();
    return r;
}

SIM_EXPORT void simcuda_log_clear(void)
{
    CONTROL_BEGIN();
    sim.nlog = 0;
    CONTROL_END();
}

SIM_EXPORT size_t simcuda_log_count(const char *func, int gpu)
{
    CONTROL_BEGIN();
    size_t n = 0;
    for (size_t i = 0; i < sim.nlog; i++) {
        const simcuda_call *e = &sim.log[i];
        if (func && strcmp(e->func, func) != 0)
            continue;
        if (gpu != SIMCUDA_ANY && e->gpu != gpu && e->gpu_after != gpu)
            continue;
        n++;
    }
    CONTROL_END();
    return n;
}

SIM_EXPORT int simcuda_unit_count(void)
{
    CONTROL_BEGIN();
    int n = sim.cfg.nunits;
    CONTROL_END();
    return n;
}

SIM_EXPORT int simcuda_unit_of_ordinal(int ordinal)
{
    CONTROL_BEGIN();
    sim_unit *u = sim_unit_of(ordinal);
    int r = u ? (int)(u - sim.cfg.units) : -1;
    CONTROL_END();
    return r;
}

SIM_EXPORT int simcuda_unit(int unit, simcuda_unit_state *out)
{
    CONTROL_BEGIN();
    int r = -1;
    if (out && unit >= 0 && unit < sim.cfg.nunits) {
        const sim_unit *u = &sim.cfg.units[unit];
        const sim_ctx *c = &u->ctx;
        memset(out, 0, sizeof *out);
        out->ordinal = u->ordinal;
        out->context_active = c->active;
        out->context_refs = c->refs;
        out->runtime_holds = c->rt_ref;
        out->faulted = c->fault;
        out->total_bytes = u->total;
        out->free_bytes = sim_unit_free(u);
        out->context_bytes = sim_ctx_cost(u);
        out->allocated_bytes = u->alloc_bytes;
        out->allocations = u->nallocs;
        out->workspaces = u->nworkspaces;
        out->pending_ops = c->null_stream.pending;
        out->contexts_created = u->contexts_created;
        out->bytes_allocated = u->bytes_allocated;
        for (const sim_stream *s = c->streams; s; s = s->next) {
            out->streams++;
            out->pending_ops += s->pending;
        }
        for (const sim_event *e = c->events; e; e = e->next)
            out->events++;
        for (const sim_blas *h = sim.handles; h; h = h->next)
            out->blas_handles += h->ctx == c;
        r = 0;
    } else {
        set_error("simcuda_unit: no unit %d", unit);
    }
    CONTROL_END();
    return r;
}

SIM_EXPORT size_t simcuda_pinned_count(void)
{
    CONTROL_BEGIN();
    size_t n = 0;
    for (const sim_alloc *a = sim.pinned; a; a = a->next)
        n++;
    CONTROL_END();
    return n;
}

SIM_EXPORT uint64_t simcuda_pinned_bytes(void)
{
    CONTROL_BEGIN();
    uint64_t n = 0;
    for (const sim_alloc *a = sim.pinned; a; a = a->next)
        n += a->size;
    CONTROL_END();
    return n;
}

SIM_EXPORT unsigned simcuda_nvml_refs(void)
{
    CONTROL_BEGIN();
    unsigned n = sim.nvml_refs;
    CONTROL_END();
    return n;
}
