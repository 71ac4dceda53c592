/*
 * nfd.c - the facts of a node, its labels, and the feature file (nfd.h).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _POSIX_C_SOURCE 200809L
#include "nfd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- facts ---------------------------------------------------------------- */

static int same_name(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

size_t nfd_product(const nfd_facts *f, size_t *count, size_t *models)
{
    size_t best = (size_t)-1, best_count = 0, distinct = 0;
    for (size_t i = 0; i < f->n_gpus; i++) {
        size_t j = 0;
        while (j < i && !same_name(f->gpus[j].name, f->gpus[i].name))
            j++;
        if (j < i)
            continue; /* counted with its first GPU */
        distinct++;
        size_t c = 0;
        for (j = i; j < f->n_gpus; j++)
            c += same_name(f->gpus[j].name, f->gpus[i].name);
        if (c > best_count) { /* '>': a tie keeps the earlier product */
            best = i;
            best_count = c;
        }
    }
    *count = best_count;
    *models = distinct;
    return best;
}

/* The smallest total memory among the GPUs of product p (f->gpus[p] is its
 * first): a model that fits it fits each of them. 0 when none is known. */
static uint64_t product_memory(const nfd_facts *f, size_t p)
{
    uint64_t mem = 0;
    for (size_t i = p; i < f->n_gpus; i++)
        if (same_name(f->gpus[i].name, f->gpus[p].name) && f->gpus[i].total_bytes > 0 &&
            (mem == 0 || f->gpus[i].total_bytes < mem))
            mem = f->gpus[i].total_bytes;
    return mem;
}

typedef struct gather {
    gpuprobe_context *ctx;
    nfd_facts *f;
    nfd_fail_fn *fail;
    void *arg;
} gather;

/* Report a failed query (st is not GPUPROBE_OK). */
static void failed(gather *g, gpuprobe_status st, const char *fmt, ...)
{
    if (st == GPUPROBE_OK)
        return;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    g->f->failures++;
    if (g->fail)
        g->fail(g->arg, g->ctx, st, what);
}

/* The device's spec, for messages. Asked before the queries about the
 * device: a successful call clears the context's last error, which a
 * failure report must still be able to read. */
static const char *spec_of(gather *g, size_t device)
{
    const char *spec = NULL;
    if (gpuprobe_device_get_string(g->ctx, device, GPUPROBE_ATTR_SPEC, &spec) != GPUPROBE_OK)
        return "?";
    return spec;
}

static void get_int(gather *g, size_t device, const char *spec, gpuprobe_attr attr,
                    const char *what, int64_t *v)
{
    gpuprobe_status st = gpuprobe_device_get_int(g->ctx, device, attr, v);
    if (st != GPUPROBE_OK)
        *v = -1;
    if (st != GPUPROBE_ERR_UNSUPPORTED) /* UNSUPPORTED: the system does not know */
        failed(g, st, "%s: %s", spec, what);
}

static void gather_gpu(gather *g, size_t device, nfd_gpu *gpu)
{
    int64_t ma, mi, total;
    const char *spec = spec_of(g, device);
    gpu->device = device;
    gpuprobe_status st = gpuprobe_device_get_string(g->ctx, device, GPUPROBE_ATTR_NAME, &gpu->name);
    if (st != GPUPROBE_OK)
        gpu->name = NULL;
    if (st != GPUPROBE_ERR_UNSUPPORTED)
        failed(g, st, "%s: product name", spec);
    get_int(g, device, spec, GPUPROBE_ATTR_CC_MAJOR, "compute capability", &ma);
    get_int(g, device, spec, GPUPROBE_ATTR_CC_MINOR, "compute capability", &mi);
    get_int(g, device, spec, GPUPROBE_ATTR_TOTAL_MEMORY, "total memory", &total);
    gpu->cc_major = ma >= 0 && mi >= 0 && ma <= 1000 && mi <= 1000 ? (int)ma : -1;
    gpu->cc_minor = gpu->cc_major >= 0 ? (int)mi : -1;
    gpu->total_bytes = total > 0 ? (uint64_t)total : 0;
}

/* One matmul; *gflops is set only when its result verified. On a GPU a
 * precision it lacks (UNSUPPORTED) is no failure; on the CPU it means
 * OpenBLAS could not be loaded, which is. */
static void measure(gather *g, const nfd_options *opt, size_t device, gpuprobe_dtype dt,
                    int on_gpu, double *gflops)
{
    const char *spec = spec_of(g, device);
    gpuprobe_matmul_options *o = NULL;
    gpuprobe_matmul_result *r = NULL;
    gpuprobe_status st = gpuprobe_matmul_options_create(&o);
    if (st == GPUPROBE_OK && opt->size > 0)
        st = gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, opt->size);
    if (st == GPUPROBE_OK)
        st = gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dt);
    if (st == GPUPROBE_OK)
        st = gpuprobe_matmul_run(g->ctx, device, o, 0, &r);
    if (st == GPUPROBE_OK) {
        int64_t verified = 0;
        double v = 0;
        if (gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_VERIFIED, &verified) == GPUPROBE_OK &&
            verified == 1 &&
            gpuprobe_matmul_result_get_double(r, GPUPROBE_METRIC_GFLOPS, &v) == GPUPROBE_OK && v > 0)
            *gflops = v;
    } else if (!(on_gpu && st == GPUPROBE_ERR_UNSUPPORTED)) {
        failed(g, st, "%s: %s matmul", spec, gpuprobe_dtype_name(dt));
    }
    gpuprobe_matmul_result_destroy(r);
    gpuprobe_matmul_options_destroy(o);
}

/* The largest fp16/bf16 model for each GPU of this product: the smallest
 * one's total memory (`total`; 0: unknown, then the device's) less the
 * CUDA context's cost, measured on `device`, its first GPU, through NVML
 * (else the library's default reserve), so that the figure does not move
 * with the load. Not gpuprobe_device_capacity(): it reserves nothing where
 * this process holds a context (its free figure excludes the context
 * already), and the context's cost must come off the total all the same. */
static void fit(gather *g, size_t device, uint64_t total)
{
    const char *spec = spec_of(g, device);
    gpuprobe_memory_info m = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_status st = gpuprobe_device_memory(g->ctx, device, &m, 0);
    if (st != GPUPROBE_OK) {
        failed(g, st, "%s: memory", spec);
        return;
    }
    uint64_t cost = (m.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED) && m.context_bytes
                        ? m.context_bytes
                        : GPUPROBE_DEFAULT_CONTEXT_RESERVE;
    if (total == 0)
        total = m.total_bytes;
    uint64_t bytes = total > cost ? total - cost : 0;
    nfd_facts *f = g->f;
    f->have_fit = gpuprobe_capacity_params(bytes, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS,
                                           &f->fit_weights) == GPUPROBE_OK &&
                  gpuprobe_capacity_params(bytes, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_INFERENCE,
                                           &f->fit_inference) == GPUPROBE_OK;
}

gpuprobe_status nfd_gather(gpuprobe_context *ctx, const nfd_options *opt, nfd_facts *f,
                           nfd_fail_fn *fail, void *arg)
{
    memset(f, 0, sizeof *f);
    gather g = {ctx, f, fail, arg};
    gpuprobe_status st = gpuprobe_cuda_status(ctx, &f->cause, NULL);
    if (st != GPUPROBE_OK) {
        failed(&g, st, "asking for CUDA");
        return st;
    }
    /* Without a driver or runtime loaded there is no version: unknown. */
    int v = 0;
    if (gpuprobe_cuda_driver_version(ctx, &v) == GPUPROBE_OK && v > 0)
        f->driver_version = v;
    if (gpuprobe_cuda_runtime_version(ctx, &v) == GPUPROBE_OK && v > 0)
        f->runtime_version = v;

    size_t n = 0;
    st = gpuprobe_device_count(ctx, &n);
    if (st == GPUPROBE_OK && n > 1 && !(f->gpus = calloc(n - 1, sizeof *f->gpus)))
        st = GPUPROBE_ERR_OUT_OF_MEMORY;
    if (st != GPUPROBE_OK) {
        failed(&g, st, "counting devices");
        return st;
    }
    for (size_t i = 1; i < n; i++) {
        int64_t kind = -1;
        failed(&g, gpuprobe_device_get_int(ctx, i, GPUPROBE_ATTR_KIND, &kind), "device %zu: kind", i);
        if (kind == GPUPROBE_DEVICE_CUDA)
            gather_gpu(&g, i, &f->gpus[f->n_gpus++]);
    }

    size_t count, models, p = nfd_product(f, &count, &models);
    if (p != (size_t)-1) {
        int64_t mig = -1;
        get_int(&g, f->gpus[p].device, spec_of(&g, f->gpus[p].device), GPUPROBE_ATTR_MIG_MODE,
                "MIG mode", &mig);
        f->mig_mode = mig == 1 ? NFD_MIG_ENABLED : mig == 0 ? NFD_MIG_DISABLED : NFD_MIG_UNKNOWN;
    }

    if (opt && opt->bench) {
        static const gpuprobe_dtype gpu_dt[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_TF32,
                                                GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16};
        static const gpuprobe_dtype cpu_dt[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_FP64};
        f->benched = 1;
        if (p != (size_t)-1) {
            /* The matmuls first: the first one creates the GPU's CUDA
             * context, whose cost the library then measures (NVML) and the
             * fit takes off. */
            for (size_t k = 0; k < sizeof gpu_dt / sizeof gpu_dt[0]; k++)
                measure(&g, opt, f->gpus[p].device, gpu_dt[k], 1, &f->gpu_gflops[gpu_dt[k]]);
            fit(&g, f->gpus[p].device, product_memory(f, p));
        }
        for (size_t k = 0; k < sizeof cpu_dt / sizeof cpu_dt[0]; k++)
            measure(&g, opt, 0, cpu_dt[k], 0, &f->cpu_gflops[cpu_dt[k]]);
    }
    return GPUPROBE_OK;
}

void nfd_facts_free(nfd_facts *f)
{
    if (f) {
        free(f->gpus);
        f->gpus = NULL;
        f->n_gpus = 0;
    }
}

/* ---- labels ----------------------------------------------------------------- */

typedef struct builder {
    const char *prefix;
    nfd_label *out;
    size_t n;
} builder;

static void add(builder *b, const char *name, const char *fmt, ...)
{
    if (b->n >= NFD_MAX_LABELS)
        return; /* cannot happen: nfd_labels() makes fewer */
    nfd_label *l = &b->out[b->n++];
    snprintf(l->key, sizeof l->key, "%s/%s", b->prefix, name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->value, sizeof l->value, fmt, ap);
    va_end(ap);
}

/* A CUDA version as three labels: "12.4", 12 and 4. */
static void add_version(builder *b, const char *what, int version)
{
    char name[48];
    int major = version / 1000, minor = version % 1000 / 10;
    snprintf(name, sizeof name, "cuda.%s.version", what);
    add(b, name, "%d.%d", major, minor);
    snprintf(name, sizeof name, "cuda.%s.major", what);
    add(b, name, "%d", major);
    snprintf(name, sizeof name, "cuda.%s.minor", what);
    add(b, name, "%d", minor);
}

/* A measured rate, rounded to a whole number of units (integers, so that
 * node affinity can compare them with Gt and Lt). */
static void add_rate(builder *b, const char *device, gpuprobe_dtype dt, double gflops,
                     double per_unit, const char *unit)
{
    double x = gflops / per_unit + 0.5;
    if (!(gflops > 0) || !(x < 1e15))
        return; /* not measured (or not a number) */
    char name[48];
    snprintf(name, sizeof name, "%s.%s.%s", device, gpuprobe_dtype_name(dt), unit);
    add(b, name, "%llu", (unsigned long long)x);
}

static void probe_labels(builder *b, const nfd_facts *f, size_t p, size_t count, size_t models)
{
    add(b, "cuda.usable", "%s", f->cause == GPUPROBE_CUDA_AVAILABLE ? "true" : "false");
    add(b, "cuda.cause", "%s", gpuprobe_cuda_cause_name(f->cause));
    if (f->driver_version > 0)
        add_version(b, "driver", f->driver_version);
    if (f->runtime_version > 0)
        add_version(b, "runtime", f->runtime_version);
    add(b, "cuda.devices", "%zu", f->n_gpus);
    if (p == (size_t)-1)
        return;
    const nfd_gpu *g = &f->gpus[p];
    if (g->name) {
        char product[LABEL_VALUE_MAX + 1];
        label_value_from(product, g->name, strlen(g->name));
        add(b, "gpu.product", "%s", product);
    }
    add(b, "gpu.count", "%zu", count);
    add(b, "gpu.models", "%zu", models);
    uint64_t mem = product_memory(f, p);
    if (mem > 0)
        add(b, "gpu.memory", "%llu", (unsigned long long)(mem >> 20));
    if (g->cc_major >= 0) {
        add(b, "gpu.compute.major", "%d", g->cc_major);
        add(b, "gpu.compute.minor", "%d", g->cc_minor);
    }
    if (f->mig_mode != NFD_MIG_UNKNOWN)
        add(b, "gpu.mig.mode", "%s", f->mig_mode == NFD_MIG_ENABLED ? "enabled" : "disabled");
}

static void measured_labels(builder *b, const nfd_facts *f, size_t p)
{
    static const gpuprobe_dtype gpu_dt[] = {GPUPROBE_DTYPE_FP32, GPUPROBE_DTYPE_TF32,
                                            GPUPROBE_DTYPE_FP16, GPUPROBE_DTYPE_BF16};
    if (p != (size_t)-1) {
        for (size_t k = 0; k < sizeof gpu_dt / sizeof gpu_dt[0]; k++)
            add_rate(b, "gpu", gpu_dt[k], f->gpu_gflops[gpu_dt[k]], 1000.0, "tflops");
        if (f->have_fit) {
            add(b, "gpu.fit.fp16.weights.billions", "%llu",
                (unsigned long long)(f->fit_weights / 1000000000u));
            add(b, "gpu.fit.fp16.inference.billions", "%llu",
                (unsigned long long)(f->fit_inference / 1000000000u));
        }
    }
    add_rate(b, "cpu", GPUPROBE_DTYPE_FP32, f->cpu_gflops[GPUPROBE_DTYPE_FP32], 1.0, "gflops");
    add_rate(b, "cpu", GPUPROBE_DTYPE_FP64, f->cpu_gflops[GPUPROBE_DTYPE_FP64], 1.0, "gflops");
}

size_t nfd_labels(const nfd_facts *f, const char *prefix, unsigned which, nfd_label *out)
{
    builder b = {prefix, out, 0};
    size_t count = 0, models = 0, p = nfd_product(f, &count, &models);
    if (which & NFD_PROBE)
        probe_labels(&b, f, p, count, models);
    if ((which & NFD_MEASURED) && f->benched)
        measured_labels(&b, f, p);
    return b.n;
}

/* ---- the feature file ---------------------------------------------------------- */

/* NFD ignores a feature file above 64 KiB: the largest one written here
 * (every label at its longest, the header, the expiry) stays below. */
_Static_assert(NFD_MAX_LABELS * (LABEL_KEY_MAX + LABEL_VALUE_MAX + 2) + 1024 < NFD_FILE_MAX,
               "a feature file could exceed NFD's limit");

int nfd_rfc3339(time_t t, char buf[21])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || tm.tm_year < 0 - 1900 || tm.tm_year > 9999 - 1900)
        return -1;
    return strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) == 20 ? 0 : -1;
}

char *nfd_file_text(const nfd_label *labels, size_t n, const char *expiry, size_t *len)
{
    /* The header never starts with "# +": NFD reads that as a directive. */
    static const char head[] = "# %s %s: node labels for the local feature source of Node "
                               "Feature Discovery; see gpuprobe-nfd(1)\n";
    size_t cap = sizeof head + 64 + (expiry ? strlen(expiry) + 32 : 0);
    for (size_t i = 0; i < n; i++)
        cap += strlen(labels[i].key) + strlen(labels[i].value) + 2;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    size_t o = (size_t)snprintf(text, cap, head, "gpuprobe-nfd", gpuprobe_version_string());
    if (expiry)
        o += (size_t)snprintf(text + o, cap - o, "# +expiry-time=%s\n", expiry);
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(text + o, cap - o, "%s=%s\n", labels[i].key, labels[i].value);
    *len = o;
    return text;
}
