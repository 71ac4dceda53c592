/*
 * select.c - choose the device a program should use: the lesson's
 * `torch.device("cuda" if torch.cuda.is_available() else "cpu")`, with
 * reasons and requirements.
 *
 * Spec grammar (exact, case-sensitive, no surrounding blanks):
 *
 *   spec    = "" | "auto" | "cpu" | "cuda" | "cuda:" ordinal
 *   ordinal = "0" | nonzero-digit *digit        (at most 2147483647)
 *
 * - The empty spec means "auto"; an empty GPUPROBE_DEVICE is not set.
 * - Upper case ("CUDA", "Cpu") is refused, as PyTorch refuses it: one
 *   spelling per device, the one GPUPROBE_ATTR_SPEC reports.
 * - Leading zeros ("cuda:01") are refused for the same reason, as PyTorch
 *   does; "cuda:0" itself is fine.
 * - Ordinals above INT_MAX (CUDA ordinals are ints) are malformed, not "not
 *   found"; "cuda:99999999999999999999" is INVALID_ARGUMENT.
 * - Specs are scanned at most SPEC_SCAN bytes far; anything longer is
 *   malformed. Messages quote the offending text through gp_quote().
 *
 * Free memory of every candidate GPU is read through gpuprobe_device_memory()
 * (NVML, no CUDA context; it serves the test seam's simulated devices too),
 * utilisation and other processes through the device attributes, and "fits
 * N parameters" through gpuprobe_device_capacity(), so selection, smi and
 * capacity always agree.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Longer than any valid spec ("cuda:2147483647" is 15 bytes). */
#define SPEC_SCAN 64
/* How much of an offending spec a message quotes. */
#define SPEC_QUOTE 40
/* How much of a device name a message shows. */
#define NAME_SHOWN 64
/* How much of the CUDA detail a message shows. */
#define DETAIL_SHOWN 300

static const char spec_expected[] =
    "expected auto, cpu, cuda or cuda:N (lower case; N a decimal CUDA "
    "ordinal without sign or leading zeros)";

gpuprobe_status gp_parse_spec(gpuprobe_context *ctx, const char *spec,
                              gp_spec_kind *kind, int *index)
{
    if (!spec)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "device spec is NULL; %s", spec_expected);
    if (!kind || !index)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gp_parse_spec: NULL output");

    char q[SPEC_QUOTE + 8];
    size_t len = strnlen(spec, SPEC_SCAN + 1);
    if (len > SPEC_SCAN) {
        gp_quote(q, sizeof q, spec, SPEC_QUOTE);
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "device spec \"%s\" is not valid: longer than %d "
                       "bytes; %s",
                       q, SPEC_SCAN, spec_expected);
    }
    gp_quote(q, sizeof q, spec, SPEC_QUOTE);

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)spec[i];
        if (c < 0x20 || c >= 0x7f)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "device spec \"%s\" is not valid: it contains a "
                           "control or non-ASCII byte (shown as '?'); %s",
                           q, spec_expected);
    }

    if (len == 0 || strcmp(spec, "auto") == 0) {
        *kind = GP_SPEC_AUTO;
        *index = -1;
        return GPUPROBE_OK;
    }
    if (strcmp(spec, "cpu") == 0) {
        *kind = GP_SPEC_CPU;
        *index = -1;
        return GPUPROBE_OK;
    }
    if (strcmp(spec, "cuda") == 0) {
        *kind = GP_SPEC_CUDA;
        *index = -1;
        return GPUPROBE_OK;
    }
    if (strncmp(spec, "cuda:", 5) == 0) {
        const char *d = spec + 5;
        size_t nd = len - 5;
        if (nd == 0)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "device spec \"%s\" is not valid: no ordinal after "
                           "\"cuda:\"; %s",
                           q, spec_expected);
        for (size_t i = 0; i < nd; i++)
            if (d[i] < '0' || d[i] > '9')
                return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                               "device spec \"%s\" is not valid: the ordinal "
                               "must be decimal digits only; %s",
                               q, spec_expected);
        if (nd > 1 && d[0] == '0')
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "device spec \"%s\" is not valid: the ordinal has "
                           "a leading zero; %s",
                           q, spec_expected);
        long v = 0;
        for (size_t i = 0; i < nd; i++) {
            int digit = d[i] - '0';
            if (v > (INT_MAX - digit) / 10)
                return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                               "device spec \"%s\" is not valid: the ordinal "
                               "is larger than %d; %s",
                               q, INT_MAX, spec_expected);
            v = v * 10 + digit;
        }
        *kind = GP_SPEC_CUDA_N;
        *index = (int)v;
        return GPUPROBE_OK;
    }

    int upper = 0;
    for (size_t i = 0; i < len; i++)
        if (spec[i] >= 'A' && spec[i] <= 'Z')
            upper = 1;
    return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                   "device spec \"%s\" is not valid%s; %s", q,
                   upper ? " (specs are lower case)" : "", spec_expected);
}

/* ---- bounded text building ---- */

typedef struct sbuf {
    char *buf;
    size_t size;
    size_t len;
    int truncated;
} sbuf;

static void sb_init(sbuf *sb, char *buf, size_t size)
{
    sb->buf = buf;
    sb->size = size;
    sb->len = 0;
    sb->truncated = 0;
    if (size)
        buf[0] = '\0';
}

static void sb_add(sbuf *sb, const char *fmt, ...) GP_PRINTF(2, 3);
static void sb_add(sbuf *sb, const char *fmt, ...)
{
    if (sb->truncated || sb->size == 0)
        return;
    size_t room = sb->size - sb->len;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(sb->buf + sb->len, room, fmt, ap);
    va_end(ap);
    if (r < 0) {
        sb->buf[sb->len] = '\0';
        return;
    }
    if ((size_t)r >= room) {
        sb->len = sb->size - 1;
        sb->truncated = 1;
        /* Mark the cut. */
        if (sb->size >= 4)
            memcpy(sb->buf + sb->size - 4, "...", 4);
        return;
    }
    sb->len += (size_t)r;
}

/* Append text, cut to at most max bytes with a "..." mark when longer. */
static void sb_add_cut(sbuf *sb, const char *text, size_t max)
{
    size_t n = strnlen(text, max + 1);
    if (n <= max || max < 3)
        sb_add(sb, "%.*s", (int)max, text);
    else
        sb_add(sb, "%.*s...", (int)(max - 3), text);
}

/* "12.0 GB": decimal units, one decimal, as the examples print; integer
 * arithmetic only. Values below 1000 are printed whole. */
static void fmt_scaled(char *buf, size_t size, uint64_t v,
                       const char *const *unit, size_t nunits)
{
    if (v < 1000) {
        snprintf(buf, size, "%llu", (unsigned long long)v);
        return;
    }
    uint64_t scale = 1;
    size_t u = 0;
    while (u + 1 < nunits && v / scale >= 1000) {
        scale *= 1000;
        u++;
    }
    uint64_t step = scale / 10; /* one tenth of the unit, >= 100 */
    uint64_t tenths = v / step;
    if ((v % step) >= step - (v % step)) /* round half up without overflow */
        tenths++;
    snprintf(buf, size, "%llu.%llu %s", (unsigned long long)(tenths / 10),
             (unsigned long long)(tenths % 10), unit[u]);
}

static void fmt_bytes(char *buf, size_t size, uint64_t v)
{
    static const char *const unit[] = {"", "kB", "MB", "GB", "TB", "PB", "EB"};
    if (v < 1000)
        snprintf(buf, size, "%llu B", (unsigned long long)v);
    else
        fmt_scaled(buf, size, v, unit, sizeof unit / sizeof unit[0]);
}

static void fmt_count(char *buf, size_t size, uint64_t v)
{
    static const char *const unit[] = {"", "K", "M", "B", "T", "Q"};
    fmt_scaled(buf, size, v, unit, sizeof unit / sizeof unit[0]);
}

/* "cuda:0 (NVIDIA H200)" or "cpu". The name is the driver's: quoted. */
static void device_label(char *buf, size_t size, const gp_device *dev)
{
    char name[NAME_SHOWN + 4];
    gp_quote(name, sizeof name, dev->name, NAME_SHOWN);
    if (dev->kind == GPUPROBE_DEVICE_CPU || dev->name[0] == '\0')
        gp_snprintf(buf, size, "%s", dev->spec);
    else
        gp_snprintf(buf, size, "%s (%s)", dev->spec, name);
}

/* ---- requirements ---- */

#define REQ_V1_SIZE                                                           \
    (offsetof(gpuprobe_requirements, fit_workload) +                          \
     sizeof(((gpuprobe_requirements *)0)->fit_workload))

/* The 1.1 struct: through no_other_process. */
#define REQ_V11_SIZE                                                          \
    (offsetof(gpuprobe_requirements, no_other_process) +                      \
     sizeof(((gpuprobe_requirements *)0)->no_other_process))

typedef struct req_t {
    uint64_t min_free;
    int cc_major, cc_minor;
    uint64_t fit_params;
    gpuprobe_dtype fit_dtype;
    gpuprobe_workload fit_workload;
    uint64_t fit_bytes; /* capacity_bytes(fit_params) */
    int max_util;       /* -1: none */
    int no_other;
} req_t;

static gpuprobe_status read_requirements(gpuprobe_context *ctx,
                                         const gpuprobe_requirements *in,
                                         req_t *r)
{
    memset(r, 0, sizeof *r);
    r->max_util = -1;
    if (!in)
        return GPUPROBE_OK;
    if (in->size < REQ_V1_SIZE)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: req->size is %zu, less than the %zu "
                       "bytes of gpuprobe_requirements (use "
                       "GPUPROBE_REQUIREMENTS_INIT)",
                       in->size, (size_t)REQ_V1_SIZE);
    if (in->min_cc_major < 0 || in->min_cc_minor < 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: negative minimum compute capability "
                       "%d.%d",
                       (int)in->min_cc_major, (int)in->min_cc_minor);
    if (in->size >= REQ_V11_SIZE) {
        if (in->max_utilization < -1 || in->max_utilization > 100)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "gpuprobe_select: max_utilization %d is not a percent "
                           "(0-100) or -1 (none)",
                           (int)in->max_utilization);
        if (in->no_other_process != 0 && in->no_other_process != 1)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "gpuprobe_select: no_other_process %d is not 0 or 1",
                           (int)in->no_other_process);
        r->max_util = in->max_utilization;
        r->no_other = in->no_other_process;
    }
    r->min_free = in->min_free_bytes;
    r->cc_major = in->min_cc_major;
    r->cc_minor = in->min_cc_minor;
    r->fit_params = in->fit_params;
    r->fit_dtype = (gpuprobe_dtype)in->fit_dtype;
    r->fit_workload = (gpuprobe_workload)in->fit_workload;
    if (r->fit_params == 0)
        return GPUPROBE_OK;

    gpuprobe_status st = gpuprobe_capacity_bytes(r->fit_params, r->fit_dtype,
                                                 r->fit_workload, &r->fit_bytes);
    switch (st) {
    case GPUPROBE_OK:
        return GPUPROBE_OK;
    case GPUPROBE_ERR_OVERFLOW:
        return gp_fail(ctx, st,
                       "gpuprobe_select: fit_params %llu exceeds "
                       "GPUPROBE_MAX_PARAMS (10^15)",
                       (unsigned long long)r->fit_params);
    case GPUPROBE_ERR_UNSUPPORTED:
        return gp_fail(ctx, st,
                       "gpuprobe_select: no %s rule for %s (fit_workload, "
                       "fit_dtype)",
                       gpuprobe_workload_name(r->fit_workload),
                       gpuprobe_dtype_name(r->fit_dtype));
    default:
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: unknown fit_dtype %d or fit_workload "
                       "%d",
                       (int)in->fit_dtype, (int)in->fit_workload);
    }
}

/* The outcome of checking one device. */
typedef struct cand {
    int ok;              /* meets every requirement */
    uint64_t free_bytes; /* GPU: free; CPU: available RAM */
    char why[256];       /* the first requirement that failed */
} cand;

/* Errors that are the caller's or the host's, not the device's: they stop
 * the selection instead of just excluding a device. */
static int is_fatal(gpuprobe_status st)
{
    return st == GPUPROBE_ERR_OUT_OF_MEMORY ||
           st == GPUPROBE_ERR_INVALID_ARGUMENT ||
           st == GPUPROBE_ERR_INTERNAL;
}

/* Each check below leaves c->why empty when the device passes, or says
 * why it fails; a status other than GPUPROBE_OK is fatal (is_fatal()). */

/* Compute capability: the CPU has none. */
static void check_cc(const gp_device *dev, const req_t *r, cand *c)
{
    int cpu = dev->kind == GPUPROBE_DEVICE_CPU;
    if (cpu && r->cc_major > 0)
        gp_snprintf(c->why, sizeof c->why,
                    "not a CUDA device (compute capability %d.%d required)",
                    r->cc_major, r->cc_minor);
    else if (!cpu && (dev->cc_major < r->cc_major ||
                      (dev->cc_major == r->cc_major && dev->cc_minor < r->cc_minor)))
        gp_snprintf(c->why, sizeof c->why,
                    "compute capability %d.%d < %d.%d required", dev->cc_major,
                    dev->cc_minor, r->cc_major, r->cc_minor);
}

/* An integer attribute a requirement needs; 1 when read, 0 when the device
 * fails for not saying (what names it in the message). */
static gpuprobe_status need_attr(gpuprobe_context *ctx, size_t idx, gpuprobe_attr attr,
                                 const char *what, int64_t *v, cand *c)
{
    gpuprobe_status qs = gpuprobe_device_get_int(ctx, idx, attr, v);
    if (qs == GPUPROBE_OK || is_fatal(qs))
        return qs;
    gp_snprintf(c->why, sizeof c->why, "%s unknown (%s)", what, ctx->error);
    return GPUPROBE_OK;
}

/* How busy the GPU is now: utilisation and other processes. */
static gpuprobe_status check_busy(gpuprobe_context *ctx, size_t idx, const gp_device *dev,
                                  const req_t *r, cand *c)
{
    if (dev->kind == GPUPROBE_DEVICE_CPU) {
        if (r->max_util >= 0 || r->no_other)
            gp_snprintf(c->why, sizeof c->why, "not a CUDA device (%s required)",
                        r->max_util >= 0 ? "a GPU utilisation limit"
                                         : "a GPU without other processes");
        return GPUPROBE_OK;
    }
    int64_t v = 0;
    gpuprobe_status st;
    if (r->max_util >= 0) {
        st = need_attr(ctx, idx, GPUPROBE_ATTR_GPU_UTILIZATION, "utilisation", &v, c);
        if (st != GPUPROBE_OK || c->why[0])
            return st;
        if (v > r->max_util) {
            gp_snprintf(c->why, sizeof c->why, "%lld%% busy > %d%% allowed",
                        (long long)v, r->max_util);
            return GPUPROBE_OK;
        }
    }
    if (r->no_other) {
        st = need_attr(ctx, idx, GPUPROBE_ATTR_COMPUTE_PROCESSES, "processes", &v, c);
        if (st != GPUPROBE_OK || c->why[0])
            return st;
        /* NVML lists this process too when it holds a context there. */
        if (v > 0 && gp_context_held(ctx, dev) == 1)
            v--;
        if (v > 0)
            gp_snprintf(c->why, sizeof c->why, "%lld other process%s with a CUDA context",
                        (long long)v, v == 1 ? "" : "es");
    }
    return GPUPROBE_OK;
}

/* Free memory (GPU) or available RAM (CPU), read when a requirement or the
 * ranking needs it. */
static gpuprobe_status check_memory(gpuprobe_context *ctx, size_t idx, const gp_device *dev,
                                    const req_t *r, int need_free, cand *c)
{
    if (!need_free && r->min_free == 0)
        return GPUPROBE_OK;
    gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_status st = gpuprobe_device_memory(ctx, idx, &info, 0);
    if (st != GPUPROBE_OK) {
        if (is_fatal(st))
            return st;
        gp_snprintf(c->why, sizeof c->why, "memory query failed: %s", ctx->error);
        return GPUPROBE_OK;
    }
    c->free_bytes = info.available_bytes;
    if (c->free_bytes < r->min_free) {
        char a[32], b[32];
        fmt_bytes(a, sizeof a, c->free_bytes);
        fmt_bytes(b, sizeof b, r->min_free);
        gp_snprintf(c->why, sizeof c->why, "%s %s < %s required", a,
                    dev->kind == GPUPROBE_DEVICE_CPU ? "available" : "free", b);
    }
    return GPUPROBE_OK;
}

/* "fits N parameters", through gpuprobe_device_capacity(). */
static gpuprobe_status check_fit(gpuprobe_context *ctx, size_t idx, const gp_device *dev,
                                 const req_t *r, cand *c)
{
    if (r->fit_params == 0)
        return GPUPROBE_OK;
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    gpuprobe_status st =
        gpuprobe_device_capacity(ctx, idx, r->fit_dtype, r->fit_workload, 0, &cap);
    if (st == GPUPROBE_ERR_OVERFLOW)
        return GPUPROBE_OK; /* holds more than GPUPROBE_MAX_PARAMS: fits anything asked */
    if (st != GPUPROBE_OK) {
        if (is_fatal(st))
            return st;
        gp_snprintf(c->why, sizeof c->why, "capacity query failed: %s", ctx->error);
        return GPUPROBE_OK;
    }
    if (cap.max_params >= r->fit_params)
        return GPUPROBE_OK;
    char n[32], a[32], u[32], b[32];
    fmt_count(n, sizeof n, r->fit_params);
    fmt_bytes(a, sizeof a, r->fit_bytes);
    fmt_bytes(u, sizeof u, cap.usable_bytes);
    fmt_bytes(b, sizeof b, cap.reserve_bytes);
    const char *dt = gpuprobe_dtype_name(r->fit_dtype);
    const char *wl = gpuprobe_workload_name(r->fit_workload);
    int cpu = dev->kind == GPUPROBE_DEVICE_CPU;
    if (cpu || cap.reserve_source == GPUPROBE_RESERVE_CONTEXT_HELD)
        gp_snprintf(c->why, sizeof c->why, "%s %s parameters for %s need %s > %s %s", n, dt,
                    wl, a, u, cpu ? "available" : "free (CUDA context held)");
    else
        gp_snprintf(c->why, sizeof c->why,
                    "%s %s parameters for %s need %s > %s usable "
                    "(after a %s %s CUDA context reserve)",
                    n, dt, wl, a, u, b,
                    cap.reserve_source == GPUPROBE_RESERVE_MEASURED ? "measured" : "default");
    return GPUPROBE_OK;
}

/*
 * Check device idx against the requirements, in order: compute capability,
 * utilisation, other processes, free memory, fit. need_free: read free
 * memory even without a memory requirement (to rank GPUs). Returns a status
 * only for fatal errors; a device that fails or cannot be queried gets
 * ok = 0 and a why.
 */
static gpuprobe_status evaluate(gpuprobe_context *ctx, size_t idx,
                                const gp_device *dev, const req_t *r,
                                int need_free, cand *c)
{
    memset(c, 0, sizeof *c);
    check_cc(dev, r, c);
    gpuprobe_status st = c->why[0] ? GPUPROBE_OK : check_busy(ctx, idx, dev, r, c);
    if (st == GPUPROBE_OK && !c->why[0])
        st = check_memory(ctx, idx, dev, r, need_free, c);
    if (st == GPUPROBE_OK && !c->why[0])
        st = check_fit(ctx, idx, dev, r, c);
    c->ok = st == GPUPROBE_OK && !c->why[0];
    return st;
}

/* A GPU's utilisation for breaking a tie: 0-100, or 101 when unknown (it
 * then counts as the busiest). */
static int utilization(gpuprobe_context *ctx, size_t idx)
{
    int64_t v = 0;
    if (gpuprobe_device_get_int(ctx, idx, GPUPROBE_ATTR_GPU_UTILIZATION, &v) != GPUPROBE_OK ||
        v < 0 || v > 100)
        return 101;
    return (int)v;
}

/* Finish successfully: write the outputs. */
static gpuprobe_status chosen(gpuprobe_context *ctx, size_t idx,
                              size_t *device, const char **reason)
{
    *device = idx;
    gp_quote_inplace(ctx->reason);
    if (reason)
        *reason = ctx->reason;
    return gp_ok(ctx);
}

/* One selection: the requirements, the spec as resolved, what exists. */
typedef struct selection {
    gpuprobe_context *ctx;
    req_t r;
    int has_req;
    gp_spec_kind kind;
    int want;                    /* cuda:N's N */
    char head[64];               /* "auto", "cuda:1 (from GPUPROBE_DEVICE)" */
    size_t count, ncuda;
    const gp_device *cpu_dev;
    gpuprobe_cuda_cause cause;
    int cuda_usable;
    char why_cuda[DETAIL_SHOWN + 128];
} selection;

/* The effective spec (GPUPROBE_DEVICE replaces the program's unless
 * flags say not to), parsed; how the reason starts. */
static gpuprobe_status resolve_spec(selection *s, const char *spec, unsigned flags)
{
    gpuprobe_context *ctx = s->ctx;
    const char *eff = spec;
    int from_env = 0;
    if (!(flags & GPUPROBE_SELECT_IGNORE_ENV) && ctx->env_device_set) {
        from_env = 1;
        eff = ctx->env_device;
        if (ctx->env_device_too_long) {
            char q[SPEC_QUOTE + 8];
            gp_quote(q, sizeof q, ctx->env_device, SPEC_QUOTE);
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "GPUPROBE_DEVICE=\"%s\" is not a valid device spec: "
                           "longer than %zu bytes; %s",
                           q, sizeof ctx->env_device - 1, spec_expected);
        }
    }
    gpuprobe_status st = gp_parse_spec(ctx, eff, &s->kind, &s->want);
    if (st != GPUPROBE_OK) {
        if (from_env) {
            char msg[GP_ERR_LEN];
            gp_strlcpy(msg, ctx->error, sizeof msg);
            return gp_fail(ctx, st, "GPUPROBE_DEVICE: %s", msg);
        }
        return st;
    }
    static const char *const kind_text[] = {"auto", "cpu", "cuda"};
    if (s->kind == GP_SPEC_CUDA_N)
        gp_snprintf(s->head, sizeof s->head, "cuda:%d", s->want);
    else
        gp_snprintf(s->head, sizeof s->head, "%s", kind_text[s->kind]);
    if (from_env)
        gp_appendf(s->head, sizeof s->head, " (from GPUPROBE_DEVICE)");
    return GPUPROBE_OK;
}

/* What exists, and is CUDA usable (and if not, why, in words)? */
static gpuprobe_status survey(selection *s)
{
    gpuprobe_context *ctx = s->ctx;
    gpuprobe_status st = gpuprobe_device_count(ctx, &s->count);
    if (st != GPUPROBE_OK)
        return st;
    const char *detail = NULL;
    s->cause = GPUPROBE_CUDA_OTHER;
    st = gpuprobe_cuda_status(ctx, &s->cause, &detail);
    if (st != GPUPROBE_OK)
        return st;
    if (detail && detail[0])
        gp_snprintf(s->why_cuda, sizeof s->why_cuda, "%s: %.*s",
                    gpuprobe_cuda_cause_string(s->cause), DETAIL_SHOWN, detail);
    else
        gp_snprintf(s->why_cuda, sizeof s->why_cuda, "%s",
                    gpuprobe_cuda_cause_string(s->cause));
    for (size_t i = 0; i < s->count; i++) {
        const gp_device *d = NULL;
        st = gp_get_device(ctx, i, &d);
        if (st != GPUPROBE_OK)
            return st;
        if (d->kind == GPUPROBE_DEVICE_CPU && !s->cpu_dev)
            s->cpu_dev = d;
        else if (d->kind == GPUPROBE_DEVICE_CUDA)
            s->ncuda++;
    }
    if (!s->cpu_dev)
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL,
                       "gpuprobe_select: the device list has no CPU");
    s->cuda_usable = s->cause == GPUPROBE_CUDA_AVAILABLE && s->ncuda > 0;
    if (!s->cuda_usable && s->cause == GPUPROBE_CUDA_AVAILABLE)
        gp_snprintf(s->why_cuda, sizeof s->why_cuda, "%s",
                    gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DEVICE));
    return GPUPROBE_OK;
}

/* "cpu": the CPU, if it meets the requirements. */
static gpuprobe_status pick_cpu(selection *s, size_t *device, const char **reason)
{
    cand c;
    gpuprobe_status st = evaluate(s->ctx, 0, s->cpu_dev, &s->r, 0, &c);
    if (st != GPUPROBE_OK)
        return st;
    if (!c.ok)
        return gp_fail(s->ctx, GPUPROBE_ERR_NO_FIT, "cpu: %s", c.why);
    gp_snprintf(s->ctx->reason, sizeof s->ctx->reason, "%s: requested", s->head);
    return chosen(s->ctx, 0, device, reason);
}

/* "cuda:N": exactly that device, if it meets the requirements. */
static gpuprobe_status pick_ordinal(selection *s, size_t *device, const char **reason)
{
    gpuprobe_context *ctx = s->ctx;
    if ((size_t)s->want >= s->ncuda) {
        if (s->ncuda == 1)
            return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                           "%s was requested but only 1 CUDA device is "
                           "visible (cuda:0)",
                           s->head);
        return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                       "%s was requested but only %zu CUDA devices are "
                       "visible (cuda:0 to cuda:%zu)",
                       s->head, s->ncuda, s->ncuda - 1);
    }
    for (size_t i = 0; i < s->count; i++) {
        const gp_device *d = NULL;
        gpuprobe_status st = gp_get_device(ctx, i, &d);
        if (st != GPUPROBE_OK)
            return st;
        if (d->kind != GPUPROBE_DEVICE_CUDA || d->cuda_index != s->want)
            continue;
        cand c;
        st = evaluate(ctx, i, d, &s->r, 0, &c);
        if (st != GPUPROBE_OK)
            return st;
        char label[NAME_SHOWN + 48];
        device_label(label, sizeof label, d);
        if (!c.ok)
            return gp_fail(ctx, GPUPROBE_ERR_NO_FIT, "%s: %s", label, c.why);
        gp_snprintf(ctx->reason, sizeof ctx->reason, "%s: requested; %s", s->head, label);
        return chosen(ctx, i, device, reason);
    }
    return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                   "%s was requested but no enumerated device has CUDA "
                   "ordinal %d",
                   s->head, s->want);
}

/* The best CUDA device so far, and why the others were left out. */
typedef struct ranking {
    const gp_device *dev;        /* NULL: none meets the requirements */
    size_t idx, nfit;
    uint64_t free_bytes;
    int util;                    /* read on a tie only; 101: unknown; -1: not read */
    char tie[NAME_SHOWN + 128];  /* how a tie was broken */
    char fails[GP_ERR_LEN];
    sbuf fl;
} ranking;

/* Candidate i (which meets the requirements, with free memory f) against
 * the best so far: more free memory wins; on a tie the less busy GPU. */
static void rank(gpuprobe_context *ctx, ranking *k, size_t i, const gp_device *d, uint64_t f)
{
    k->nfit++;
    int better = !k->dev || f > k->free_bytes;
    if (!better && f == k->free_bytes) {
        if (k->util < 0)
            k->util = utilization(ctx, k->idx);
        int u = utilization(ctx, i);
        if (u < k->util) {
            char other[NAME_SHOWN + 48], was[16] = "unknown";
            device_label(other, sizeof other, k->dev);
            if (k->util <= 100)
                gp_snprintf(was, sizeof was, "%d%%", k->util);
            gp_snprintf(k->tie, sizeof k->tie, "; as much free as %s, less busy (%d%%, not %s)",
                        other, u, was);
            better = 1;
            k->util = u;
        }
    } else if (better) {
        k->util = -1;
        k->tie[0] = '\0';
    }
    if (better) {
        k->idx = i;
        k->free_bytes = f;
        k->dev = d;
    }
}

/* "auto" and "cuda": every CUDA device evaluated and ranked. */
static gpuprobe_status rank_cuda(selection *s, ranking *k)
{
    memset(k, 0, sizeof *k);
    k->util = -1;
    sb_init(&k->fl, k->fails, sizeof k->fails);
    if (!s->cuda_usable)
        return GPUPROBE_OK;
    for (size_t i = 0; i < s->count; i++) {
        const gp_device *d = NULL;
        gpuprobe_status st = gp_get_device(s->ctx, i, &d);
        if (st != GPUPROBE_OK)
            return st;
        if (d->kind != GPUPROBE_DEVICE_CUDA)
            continue;
        cand c;
        st = evaluate(s->ctx, i, d, &s->r, 1, &c);
        if (st != GPUPROBE_OK)
            return st;
        if (c.ok) {
            rank(s->ctx, k, i, d, c.free_bytes);
        } else {
            char label[NAME_SHOWN + 48];
            device_label(label, sizeof label, d);
            sb_add(&k->fl, "%s%s: %s", k->fl.len ? "; " : "", label, c.why);
        }
    }
    return GPUPROBE_OK;
}

/* The reason for the best CUDA device. */
static gpuprobe_status pick_best(selection *s, const ranking *k, size_t *device,
                                 const char **reason)
{
    sbuf out;
    char label[NAME_SHOWN + 48], fb[32];
    sb_init(&out, s->ctx->reason, sizeof s->ctx->reason);
    device_label(label, sizeof label, k->dev);
    fmt_bytes(fb, sizeof fb, k->free_bytes);
    if (k->nfit == 1 && s->ncuda == 1)
        sb_add(&out, "%s: %s, %s free, the only CUDA device", s->head, label, fb);
    else if (k->nfit == 1)
        sb_add(&out, "%s: %s, %s free, the only CUDA device that %s", s->head, label, fb,
               s->has_req ? "meets the requirements" : "could be used");
    else
        sb_add(&out, "%s: %s has the most free memory (%s) of %zu CUDA devices%s", s->head,
               label, fb, k->nfit, s->has_req ? " that meet the requirements" : "");
    if (k->tie[0])
        sb_add(&out, "%s", k->tie);
    if (k->fl.len)
        sb_add(&out, "; skipped %s", k->fails);
    return chosen(s->ctx, k->idx, device, reason);
}

/* "auto" with no CUDA device to use: the CPU, if it meets the
 * requirements, and why no GPU. */
static gpuprobe_status fall_back(selection *s, const ranking *k, size_t *device,
                                 const char **reason)
{
    cand c;
    gpuprobe_status st = evaluate(s->ctx, 0, s->cpu_dev, &s->r, 0, &c);
    if (st != GPUPROBE_OK)
        return st;
    sbuf out;
    if (!c.ok) {
        char msg[GP_ERR_LEN];
        sb_init(&out, msg, sizeof msg);
        if (s->cuda_usable) {
            sb_add_cut(&out, k->fails, 300);
            sb_add(&out, "; ");
        } else {
            sb_add(&out, "CUDA not usable (%s); ", s->why_cuda);
        }
        sb_add(&out, "cpu: %s", c.why);
        return gp_fail(s->ctx, GPUPROBE_ERR_NO_FIT, "%s", msg);
    }
    sb_init(&out, s->ctx->reason, sizeof s->ctx->reason);
    if (s->cuda_usable) {
        sb_add(&out, "%s: no CUDA device %s (", s->head,
               s->has_req ? "meets the requirements" : "could be used");
        sb_add_cut(&out, k->fails, 380);
        sb_add(&out, "); using cpu");
    } else {
        sb_add(&out, "%s: CUDA not usable (%s); using cpu", s->head, s->why_cuda);
    }
    return chosen(s->ctx, 0, device, reason);
}

gpuprobe_status gpuprobe_select(gpuprobe_context *ctx, const char *spec,
                                const gpuprobe_requirements *req,
                                unsigned flags, size_t *device,
                                const char **reason)
{
    if (!ctx)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    ctx->reason[0] = '\0';
    if (!device)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: device is NULL");
    if (flags & ~GPUPROBE_SELECT_IGNORE_ENV)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: flags must be 0 or "
                       "GPUPROBE_SELECT_IGNORE_ENV, not 0x%x",
                       flags);
    if (!spec)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: spec is NULL (pass \"auto\" for the "
                       "default)");

    selection s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.want = -1;
    gpuprobe_status st = read_requirements(ctx, req, &s.r);
    if (st != GPUPROBE_OK)
        return st;
    s.has_req = s.r.min_free > 0 || s.r.cc_major > 0 || s.r.cc_minor > 0 ||
                s.r.fit_params > 0 || s.r.max_util >= 0 || s.r.no_other;
    st = resolve_spec(&s, spec, flags);
    if (st == GPUPROBE_OK)
        st = survey(&s);
    if (st != GPUPROBE_OK)
        return st;

    if (s.kind == GP_SPEC_CPU)
        return pick_cpu(&s, device, reason);
    /* Explicit CUDA: no fallback. */
    if (s.kind != GP_SPEC_AUTO && !s.cuda_usable)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE, "%s was requested (%s): %s",
                       s.head, gpuprobe_cuda_cause_name(s.cause), s.why_cuda);
    if (s.kind == GP_SPEC_CUDA_N)
        return pick_ordinal(&s, device, reason);

    /* auto / cuda: the CUDA device with the most free memory. */
    ranking k;
    st = rank_cuda(&s, &k);
    if (st != GPUPROBE_OK)
        return st;
    if (k.dev)
        return pick_best(&s, &k, device, reason);
    if (s.kind == GP_SPEC_CUDA) /* the status text says "no device meets the requirements" */
        return gp_fail(ctx, GPUPROBE_ERR_NO_FIT, "%s%s",
                       s.has_req ? "" : "no CUDA device could be used: ", k.fails);
    return fall_back(&s, &k, device, reason);
}
