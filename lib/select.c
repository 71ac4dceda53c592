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
 * - The empty spec means "auto" (so does an empty GPUPROBE_DEVICE).
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
    int have_free;       /* free_bytes is known */
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

/*
 * Check device idx against the requirements. need_free: read free memory
 * even without a memory requirement (to rank GPUs). Returns a status only
 * for fatal errors; a device that fails or cannot be queried gets ok = 0
 * and a why.
 */
static gpuprobe_status evaluate(gpuprobe_context *ctx, size_t idx,
                                const gp_device *dev, const req_t *r,
                                int need_free, cand *c)
{
    memset(c, 0, sizeof *c);
    int cpu = dev->kind == GPUPROBE_DEVICE_CPU;

    if (cpu && r->cc_major > 0) {
        gp_snprintf(c->why, sizeof c->why,
                    "not a CUDA device (compute capability %d.%d required)",
                    r->cc_major, r->cc_minor);
        return GPUPROBE_OK;
    }
    if (!cpu && (dev->cc_major < r->cc_major ||
                 (dev->cc_major == r->cc_major && dev->cc_minor < r->cc_minor))) {
        gp_snprintf(c->why, sizeof c->why,
                    "compute capability %d.%d < %d.%d required", dev->cc_major,
                    dev->cc_minor, r->cc_major, r->cc_minor);
        return GPUPROBE_OK;
    }
    if (cpu && (r->max_util >= 0 || r->no_other)) {
        gp_snprintf(c->why, sizeof c->why, "not a CUDA device (%s required)",
                    r->max_util >= 0 ? "a GPU utilisation limit"
                                     : "a GPU without other processes");
        return GPUPROBE_OK;
    }
    int64_t v = 0;
    gpuprobe_status qs;
    if (!cpu && r->max_util >= 0) {
        qs = gpuprobe_device_get_int(ctx, idx, GPUPROBE_ATTR_GPU_UTILIZATION, &v);
        if (qs != GPUPROBE_OK) {
            if (is_fatal(qs))
                return qs;
            gp_snprintf(c->why, sizeof c->why, "utilisation unknown (%s)", ctx->error);
            return GPUPROBE_OK;
        }
        if (v > r->max_util) {
            gp_snprintf(c->why, sizeof c->why, "%lld%% busy > %d%% allowed",
                        (long long)v, r->max_util);
            return GPUPROBE_OK;
        }
    }
    if (!cpu && r->no_other) {
        qs = gpuprobe_device_get_int(ctx, idx, GPUPROBE_ATTR_COMPUTE_PROCESSES, &v);
        if (qs != GPUPROBE_OK) {
            if (is_fatal(qs))
                return qs;
            gp_snprintf(c->why, sizeof c->why, "processes unknown (%s)", ctx->error);
            return GPUPROBE_OK;
        }
        /* NVML lists this process too when it holds a context there. */
        if (v > 0 && gp_context_held(ctx, dev) == 1)
            v--;
        if (v > 0) {
            gp_snprintf(c->why, sizeof c->why, "%lld other process%s with a CUDA context",
                        (long long)v, v == 1 ? "" : "es");
            return GPUPROBE_OK;
        }
    }

    char a[32], b[32], n[32], u[32];
    if (need_free || r->min_free > 0) {
        gpuprobe_memory_info info = GPUPROBE_MEMORY_INFO_INIT;
        gpuprobe_status st = gpuprobe_device_memory(ctx, idx, &info, 0);
        if (st != GPUPROBE_OK) {
            if (is_fatal(st))
                return st;
            gp_snprintf(c->why, sizeof c->why, "memory query failed: %s",
                        ctx->error);
            return GPUPROBE_OK;
        }
        c->have_free = 1;
        c->free_bytes = info.available_bytes;
        if (c->free_bytes < r->min_free) {
            fmt_bytes(a, sizeof a, c->free_bytes);
            fmt_bytes(b, sizeof b, r->min_free);
            gp_snprintf(c->why, sizeof c->why, "%s %s < %s required", a,
                        cpu ? "available" : "free", b);
            return GPUPROBE_OK;
        }
    }

    if (r->fit_params > 0) {
        gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
        gpuprobe_status st = gpuprobe_device_capacity(
            ctx, idx, r->fit_dtype, r->fit_workload, 0, &cap);
        if (st == GPUPROBE_ERR_OVERFLOW) {
            /* Holds more than GPUPROBE_MAX_PARAMS: fits anything asked. */
        } else if (st != GPUPROBE_OK) {
            if (is_fatal(st))
                return st;
            gp_snprintf(c->why, sizeof c->why, "capacity query failed: %s",
                        ctx->error);
            return GPUPROBE_OK;
        } else if (cap.max_params < r->fit_params) {
            fmt_count(n, sizeof n, r->fit_params);
            fmt_bytes(a, sizeof a, r->fit_bytes);
            fmt_bytes(u, sizeof u, cap.usable_bytes);
            fmt_bytes(b, sizeof b, cap.reserve_bytes);
            if (cpu || cap.reserve_source == GPUPROBE_RESERVE_CONTEXT_HELD)
                gp_snprintf(c->why, sizeof c->why,
                            "%s %s parameters for %s need %s > %s %s",
                            n, gpuprobe_dtype_name(r->fit_dtype),
                            gpuprobe_workload_name(r->fit_workload), a, u,
                            cpu ? "available" : "free (CUDA context held)");
            else
                gp_snprintf(c->why, sizeof c->why,
                            "%s %s parameters for %s need %s > %s usable "
                            "(after a %s %s CUDA context reserve)",
                            n, gpuprobe_dtype_name(r->fit_dtype),
                            gpuprobe_workload_name(r->fit_workload), a, u, b,
                            cap.reserve_source == GPUPROBE_RESERVE_MEASURED
                                ? "measured"
                                : "default");
            return GPUPROBE_OK;
        }
    }
    c->ok = 1;
    return GPUPROBE_OK;
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

    req_t r;
    gpuprobe_status st = read_requirements(ctx, req, &r);
    if (st != GPUPROBE_OK)
        return st;
    int has_req = r.min_free > 0 || r.cc_major > 0 || r.cc_minor > 0 ||
                  r.fit_params > 0 || r.max_util >= 0 || r.no_other;

    /* The effective spec: GPUPROBE_DEVICE replaces the program's. */
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
    gp_spec_kind kind;
    int want = -1;
    st = gp_parse_spec(ctx, eff, &kind, &want);
    if (st != GPUPROBE_OK) {
        if (from_env) {
            char msg[GP_ERR_LEN];
            gp_strlcpy(msg, ctx->error, sizeof msg);
            return gp_fail(ctx, st, "GPUPROBE_DEVICE: %s", msg);
        }
        return st;
    }

    /* "auto", "cuda:1 (from GPUPROBE_DEVICE)": how the reason starts. */
    char head[64];
    static const char *const kind_text[] = {"auto", "cpu", "cuda"};
    if (kind == GP_SPEC_CUDA_N)
        gp_snprintf(head, sizeof head, "cuda:%d", want);
    else
        gp_snprintf(head, sizeof head, "%s", kind_text[kind]);
    if (from_env)
        gp_snprintf(head + strlen(head), sizeof head - strlen(head),
                    " (from GPUPROBE_DEVICE)");

    /* What exists, and is CUDA usable? */
    size_t count = 0;
    st = gpuprobe_device_count(ctx, &count);
    if (st != GPUPROBE_OK)
        return st;
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = NULL;
    st = gpuprobe_cuda_status(ctx, &cause, &detail);
    if (st != GPUPROBE_OK)
        return st;
    char why_cuda[DETAIL_SHOWN + 128];
    if (detail && detail[0])
        gp_snprintf(why_cuda, sizeof why_cuda, "%s: %.*s",
                    gpuprobe_cuda_cause_string(cause), DETAIL_SHOWN, detail);
    else
        gp_snprintf(why_cuda, sizeof why_cuda, "%s",
                    gpuprobe_cuda_cause_string(cause));

    const gp_device *cpu_dev = NULL;
    size_t ncuda = 0;
    for (size_t i = 0; i < count; i++) {
        const gp_device *d = NULL;
        st = gp_get_device(ctx, i, &d);
        if (st != GPUPROBE_OK)
            return st;
        if (d->kind == GPUPROBE_DEVICE_CPU && !cpu_dev)
            cpu_dev = d;
        else if (d->kind == GPUPROBE_DEVICE_CUDA)
            ncuda++;
    }
    if (!cpu_dev)
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL,
                       "gpuprobe_select: the device list has no CPU");
    int cuda_usable = cause == GPUPROBE_CUDA_AVAILABLE && ncuda > 0;
    if (!cuda_usable && cause == GPUPROBE_CUDA_AVAILABLE)
        gp_snprintf(why_cuda, sizeof why_cuda, "%s",
                    gpuprobe_cuda_cause_string(GPUPROBE_CUDA_NO_DEVICE));

    char label[NAME_SHOWN + 48];
    char fb[32];
    cand c;
    sbuf out;

    /* ---- cpu ---- */
    if (kind == GP_SPEC_CPU) {
        st = evaluate(ctx, 0, cpu_dev, &r, 0, &c);
        if (st != GPUPROBE_OK)
            return st;
        if (!c.ok)
            return gp_fail(ctx, GPUPROBE_ERR_NO_FIT,
                           "cpu: %s", c.why);
        gp_snprintf(ctx->reason, sizeof ctx->reason, "%s: requested", head);
        return chosen(ctx, 0, device, reason);
    }

    /* ---- explicit CUDA: no fallback ---- */
    if (kind != GP_SPEC_AUTO && !cuda_usable)
        return gp_fail(ctx, GPUPROBE_ERR_CUDA_UNAVAILABLE,
                       "%s was requested (%s): %s", head,
                       gpuprobe_cuda_cause_name(cause), why_cuda);

    if (kind == GP_SPEC_CUDA_N) {
        if ((size_t)want >= ncuda) {
            if (ncuda == 1)
                return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                               "%s was requested but only 1 CUDA device is "
                               "visible (cuda:0)",
                               head);
            return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                           "%s was requested but only %zu CUDA devices are "
                           "visible (cuda:0 to cuda:%zu)",
                           head, ncuda, ncuda - 1);
        }
        for (size_t i = 0; i < count; i++) {
            const gp_device *d = NULL;
            st = gp_get_device(ctx, i, &d);
            if (st != GPUPROBE_OK)
                return st;
            if (d->kind != GPUPROBE_DEVICE_CUDA || d->cuda_index != want)
                continue;
            st = evaluate(ctx, i, d, &r, 0, &c);
            if (st != GPUPROBE_OK)
                return st;
            device_label(label, sizeof label, d);
            if (!c.ok)
                return gp_fail(ctx, GPUPROBE_ERR_NO_FIT,
                               "%s: %s",
                               label, c.why);
            gp_snprintf(ctx->reason, sizeof ctx->reason, "%s: requested; %s",
                        head, label);
            return chosen(ctx, i, device, reason);
        }
        return gp_fail(ctx, GPUPROBE_ERR_NOT_FOUND,
                       "%s was requested but no enumerated device has CUDA "
                       "ordinal %d",
                       head, want);
    }

    /* ---- auto / cuda: the CUDA device with the most free memory ---- */
    char fails[GP_ERR_LEN];
    sbuf fl;
    sb_init(&fl, fails, sizeof fails);
    size_t best = 0, nfit = 0;
    uint64_t best_free = 0;
    const gp_device *best_dev = NULL;
    int best_util = -1;     /* read on a tie only; 101: unknown */
    char tie[NAME_SHOWN + 128] = "";
    if (cuda_usable) {
        for (size_t i = 0; i < count; i++) {
            const gp_device *d = NULL;
            st = gp_get_device(ctx, i, &d);
            if (st != GPUPROBE_OK)
                return st;
            if (d->kind != GPUPROBE_DEVICE_CUDA)
                continue;
            st = evaluate(ctx, i, d, &r, 1, &c);
            if (st != GPUPROBE_OK)
                return st;
            device_label(label, sizeof label, d);
            if (!c.ok) {
                sb_add(&fl, "%s%s: %s", fl.len ? "; " : "", label, c.why);
                continue;
            }
            nfit++;
            int better = !best_dev || c.free_bytes > best_free;
            if (!better && c.free_bytes == best_free) {
                /* A tie on free memory: the less busy GPU. */
                if (best_util < 0)
                    best_util = utilization(ctx, best);
                int u = utilization(ctx, i);
                if (u < best_util) {
                    char other[NAME_SHOWN + 48], was[16] = "unknown";
                    device_label(other, sizeof other, best_dev);
                    if (best_util <= 100)
                        gp_snprintf(was, sizeof was, "%d%%", best_util);
                    gp_snprintf(tie, sizeof tie, "; as much free as %s, less busy (%d%%, not %s)",
                                other, u, was);
                    better = 1;
                    best_util = u;
                }
            } else if (better) {
                best_util = -1;
                tie[0] = '\0';
            }
            if (better) {
                best = i;
                best_free = c.free_bytes;
                best_dev = d;
            }
        }
    }
    if (best_dev) {
        sb_init(&out, ctx->reason, sizeof ctx->reason);
        device_label(label, sizeof label, best_dev);
        fmt_bytes(fb, sizeof fb, best_free);
        if (nfit == 1 && ncuda == 1)
            sb_add(&out, "%s: %s, %s free, the only CUDA device", head, label,
                   fb);
        else if (nfit == 1)
            sb_add(&out, "%s: %s, %s free, the only CUDA device that %s",
                   head, label, fb,
                   has_req ? "meets the requirements" : "could be used");
        else
            sb_add(&out,
                   "%s: %s has the most free memory (%s) of %zu CUDA devices%s",
                   head, label, fb, nfit,
                   has_req ? " that meet the requirements" : "");
        if (tie[0])
            sb_add(&out, "%s", tie);
        if (fl.len)
            sb_add(&out, "; skipped %s", fails);
        return chosen(ctx, best, device, reason);
    }

    if (kind == GP_SPEC_CUDA) {
        char msg[GP_ERR_LEN];
        sb_init(&out, msg, sizeof msg);
        /* The status text says "no device meets the requirements". */
        sb_add(&out, "%s%s", has_req ? "" : "no CUDA device could be used: ", fails);
        return gp_fail(ctx, GPUPROBE_ERR_NO_FIT, "%s", msg);
    }

    /* auto: fall back to the CPU. */
    st = evaluate(ctx, 0, cpu_dev, &r, 0, &c);
    if (st != GPUPROBE_OK)
        return st;
    if (!c.ok) {
        char msg[GP_ERR_LEN];
        sb_init(&out, msg, sizeof msg);
        if (cuda_usable) {
            sb_add_cut(&out, fails, 300);
            sb_add(&out, "; ");
        } else {
            sb_add(&out, "CUDA not usable (%s); ", why_cuda);
        }
        sb_add(&out, "cpu: %s", c.why);
        return gp_fail(ctx, GPUPROBE_ERR_NO_FIT, "%s", msg);
    }
    sb_init(&out, ctx->reason, sizeof ctx->reason);
    if (cuda_usable) {
        sb_add(&out, "%s: no CUDA device %s (", head,
               has_req ? "meets the requirements" : "could be used");
        sb_add_cut(&out, fails, 380);
        sb_add(&out, "); using cpu");
    } else {
        sb_add(&out, "%s: CUDA not usable (%s); using cpu", head, why_cuda);
    }
    return chosen(ctx, 0, device, reason);
}
