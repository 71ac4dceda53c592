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
 * Free memory of every candidate GPU is read once through gp_memory_read()
 * (NVML, no CUDA context; it serves the test seam's simulated devices too),
 * utilisation and other processes through the attributes' own reader
 * (gp_device_nvml_int()), and "fits N parameters" by the capacity rule on
 * that same reading (gp_capacity_of()), and a model by its plan on that
 * reading (gp_plan_on(), gpuprobe_plan_device()'s figures), so selection,
 * smi, capacity and plans always agree; no public entry point is called
 * from here.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <limits.h>
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

/* The words a spec may be, and what each selects ("" is "auto"). */
static const struct {
    const char *word;
    gp_spec_kind kind;
} spec_words[] = {
    {"", GP_SPEC_AUTO},
    {"auto", GP_SPEC_AUTO},
    {"cpu", GP_SPEC_CPU},
    {"cuda", GP_SPEC_CUDA},
};
#define N_SPEC_WORDS (sizeof spec_words / sizeof spec_words[0])

/* The spec's bytes: at most SPEC_SCAN, printable ASCII. *len gets its
 * length, q (SPEC_QUOTE + 8 bytes) its quoted form for messages. */
static gpuprobe_status spec_bytes(gpuprobe_context *ctx, const char *spec, char *q,
                                  size_t *len)
{
    *len = strnlen(spec, SPEC_SCAN + 1);
    gp_quote(q, SPEC_QUOTE + 8, spec, SPEC_QUOTE);
    if (*len > SPEC_SCAN)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "device spec \"%s\" is not valid: longer than %d bytes; %s", q,
                       SPEC_SCAN, spec_expected);
    for (size_t i = 0; i < *len; i++) {
        unsigned char c = (unsigned char)spec[i];
        if (c < 0x20 || c >= 0x7f)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "device spec \"%s\" is not valid: it contains a "
                           "control or non-ASCII byte (shown as '?'); %s",
                           q, spec_expected);
    }
    return GPUPROBE_OK;
}

/* The N of "cuda:N" (d, nd bytes): decimal digits, no leading zero, at
 * most INT_MAX. q is the quoted spec. */
static gpuprobe_status spec_ordinal(gpuprobe_context *ctx, const char *q, const char *d,
                                    size_t nd, int *index)
{
    const char *why = NULL;
    long v = 0;
    if (nd == 0)
        why = "no ordinal after \"cuda:\"";
    for (size_t i = 0; !why && i < nd; i++)
        if (d[i] < '0' || d[i] > '9')
            why = "the ordinal must be decimal digits only";
    if (!why && nd > 1 && d[0] == '0')
        why = "the ordinal has a leading zero";
    for (size_t i = 0; !why && i < nd; i++) {
        int digit = d[i] - '0';
        if (v > (INT_MAX - digit) / 10)
            return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                           "device spec \"%s\" is not valid: the ordinal is larger "
                           "than %d; %s",
                           q, INT_MAX, spec_expected);
        v = v * 10 + digit;
    }
    if (why)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "device spec \"%s\" is not valid: %s; %s", q, why, spec_expected);
    *index = (int)v;
    return GPUPROBE_OK;
}

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
    size_t len;
    gpuprobe_status st = spec_bytes(ctx, spec, q, &len);
    if (st != GPUPROBE_OK)
        return st;
    for (size_t i = 0; i < N_SPEC_WORDS; i++) {
        if (strcmp(spec, spec_words[i].word) == 0) {
            *kind = spec_words[i].kind;
            *index = -1;
            return GPUPROBE_OK;
        }
    }
    if (strncmp(spec, "cuda:", 5) == 0) {
        st = spec_ordinal(ctx, q, spec + 5, len - 5, index);
        if (st == GPUPROBE_OK)
            *kind = GP_SPEC_CUDA_N;
        return st;
    }
    int upper = 0;
    for (size_t i = 0; i < len; i++)
        upper |= spec[i] >= 'A' && spec[i] <= 'Z';
    return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                   "device spec \"%s\" is not valid%s; %s", q,
                   upper ? " (specs are lower case)" : "", spec_expected);
}

/* How a reason names a kind of spec: its first word ("auto", not ""). */
static const char *spec_word(gp_spec_kind kind)
{
    for (size_t i = 0; i < N_SPEC_WORDS; i++)
        if (spec_words[i].kind == kind && spec_words[i].word[0])
            return spec_words[i].word;
    return "";
}

/* ---- text ---- */

/* Append text cut to at most max bytes, the cut marked with "..." (the
 * list of GPUs left out, inside a longer message). */
static void append_cut(char *dst, size_t size, const char *text, size_t max)
{
    char cut[GP_ERR_LEN];
    gp_quote(cut, max < sizeof cut ? max + 1 : sizeof cut, text, SIZE_MAX);
    gp_appendf(dst, size, "%s", cut);
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

typedef struct req_t {
    uint64_t min_free;
    int cc_major, cc_minor;
    uint64_t fit_params;
    gpuprobe_dtype fit_dtype;
    gpuprobe_workload fit_workload;
    uint64_t fit_bytes; /* capacity_bytes(fit_params) */
    int max_util;       /* -1: none */
    int no_other;
    const gpuprobe_model *model; /* NULL: none */
    const gpuprobe_plan_options *plan;
} req_t;

static gpuprobe_status read_requirements(gpuprobe_context *ctx,
                                         const gpuprobe_requirements *in,
                                         req_t *r)
{
    memset(r, 0, sizeof *r);
    r->max_util = -1;
    if (!in)
        return GPUPROBE_OK;
    /* The 1.0 struct ends with fit_workload, the 1.1 one with no_other_process. */
    gpuprobe_status st = GP_CHECK_SIZE(ctx, "gpuprobe_select", "req", in->size,
                                       gpuprobe_requirements, fit_workload);
    if (st != GPUPROBE_OK)
        return st;
    if (in->min_cc_major < 0 || in->min_cc_minor < 0)
        return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                       "gpuprobe_select: negative minimum compute capability "
                       "%d.%d",
                       (int)in->min_cc_major, (int)in->min_cc_minor);
    if (in->size >= GP_END_OF(gpuprobe_requirements, no_other_process)) {
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
    if (in->size >= GP_END_OF(gpuprobe_requirements, fit_plan) && in->fit_model) {
        /* The model's own errors are the caller's: said before any device
         * is looked at. */
        st = gp_plan_check(ctx, in->fit_model, in->fit_plan);
        if (st != GPUPROBE_OK)
            return st;
        r->model = in->fit_model;
        r->plan = in->fit_plan;
    }
    r->min_free = in->min_free_bytes;
    r->cc_major = in->min_cc_major;
    r->cc_minor = in->min_cc_minor;
    r->fit_params = in->fit_params;
    r->fit_dtype = (gpuprobe_dtype)in->fit_dtype;
    r->fit_workload = (gpuprobe_workload)in->fit_workload;
    if (r->fit_params == 0)
        return GPUPROBE_OK;

    st = gpuprobe_capacity_bytes(r->fit_params, r->fit_dtype, r->fit_workload,
                                 &r->fit_bytes);
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
    int have_mem;        /* mem was read (once per check) */
    gp_memory mem;
    uint64_t free_bytes; /* GPU: free; CPU: available RAM */
    uint64_t need;       /* with a model: its plan's total on this device */
    uint64_t room;       /* with a model: what allocations can get, less need */
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
 * why it fails; a status other than GPUPROBE_OK is fatal (is_fatal()).
 * They read the devices through the library's own calls, never through
 * its public entry points (which check their arguments again and clear
 * the context's message when they succeed). A device that cannot answer
 * is left out with the words of the call that failed: it wrote them into
 * the context's message (gp_fail()) just before, and left() takes them
 * at once. */

/* The device is left out because a query failed: why is the query's
 * message between before and after. */
static gpuprobe_status left(gpuprobe_context *ctx, gpuprobe_status st, cand *c,
                            const char *before, const char *after)
{
    if (is_fatal(st))
        return st;
    gp_snprintf(c->why, sizeof c->why, "%s%s%s", before, ctx->error, after);
    return GPUPROBE_OK;
}

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

/* An NVML figure a requirement needs; a device that cannot say it is left
 * out, the figure named by what and the reason in words for people. */
static gpuprobe_status need_figure(gpuprobe_context *ctx, size_t idx, gpuprobe_attr attr,
                                   const char *what, int64_t *v, cand *c)
{
    char why[160];
    gpuprobe_status st = gp_device_nvml_int(ctx, idx, attr, v, why, sizeof why);
    if (st == GPUPROBE_OK || is_fatal(st))
        return st;
    gp_snprintf(c->why, sizeof c->why, "%s unknown (%s)", what, why);
    return GPUPROBE_OK;
}

/* The device's memory, read once for the free-memory check and the fit
 * (what names the query in a failure). */
static gpuprobe_status read_memory(gpuprobe_context *ctx, size_t idx, const char *what,
                                   cand *c)
{
    if (c->have_mem)
        return GPUPROBE_OK;
    gpuprobe_status st = gp_memory_read(ctx, idx, 0, &c->mem);
    c->have_mem = st == GPUPROBE_OK;
    return st == GPUPROBE_OK ? st : left(ctx, st, c, what, "");
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
        st = need_figure(ctx, idx, GPUPROBE_ATTR_GPU_UTILIZATION, "utilisation",
                         &v, c);
        if (st != GPUPROBE_OK || c->why[0])
            return st;
        if (v > r->max_util) {
            gp_snprintf(c->why, sizeof c->why, "%lld%% busy > %d%% allowed",
                        (long long)v, r->max_util);
            return GPUPROBE_OK;
        }
    }
    if (r->no_other) {
        st = need_figure(ctx, idx, GPUPROBE_ATTR_COMPUTE_PROCESSES, "processes",
                         &v, c);
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
    gpuprobe_status st = read_memory(ctx, idx, "memory query failed: ", c);
    if (st != GPUPROBE_OK || c->why[0])
        return st;
    c->free_bytes = c->mem.available;
    if (c->free_bytes < r->min_free) {
        char a[32], b[32];
        gp_format_bytes(a, sizeof a, c->free_bytes);
        gp_format_bytes(b, sizeof b, r->min_free);
        gp_snprintf(c->why, sizeof c->why, "%s %s < %s required", a,
                    dev->kind == GPUPROBE_DEVICE_CPU ? "available" : "free", b);
    }
    return GPUPROBE_OK;
}

/* "fits N parameters", by gpuprobe_device_capacity()'s rule
 * (gp_capacity_of()) on the memory read for this check. */
static gpuprobe_status check_fit(gpuprobe_context *ctx, size_t idx, const gp_device *dev,
                                 const req_t *r, cand *c)
{
    if (r->fit_params == 0)
        return GPUPROBE_OK;
    gpuprobe_status st = read_memory(ctx, idx, "capacity query failed: ", c);
    if (st != GPUPROBE_OK || c->why[0])
        return st;
    gpuprobe_capacity cap = GPUPROBE_CAPACITY_INIT;
    st = gp_capacity_of(dev, &c->mem, r->fit_dtype, r->fit_workload, &cap);
    if (st == GPUPROBE_ERR_OVERFLOW)
        return GPUPROBE_OK; /* holds more than GPUPROBE_MAX_PARAMS: fits anything asked */
    if (st != GPUPROBE_OK)
        return gp_fail(ctx, GPUPROBE_ERR_INTERNAL, "gpuprobe_select: %s",
                       gpuprobe_status_string(st)); /* the rule was checked */
    if (cap.max_params >= r->fit_params)
        return GPUPROBE_OK;
    char n[32], a[32], u[32], b[32];
    gp_format_count(n, sizeof n, r->fit_params);
    gp_format_bytes(a, sizeof a, r->fit_bytes);
    gp_format_bytes(u, sizeof u, cap.usable_bytes);
    gp_format_bytes(b, sizeof b, cap.reserve_bytes);
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

/* The model, by its plan on the memory read for this check (gp_plan_on(),
 * gpuprobe_plan_device()'s figures). */
static gpuprobe_status check_model(gpuprobe_context *ctx, size_t idx, const gp_device *dev,
                                   const req_t *r, cand *c)
{
    if (!r->model)
        return GPUPROBE_OK;
    gpuprobe_status st = read_memory(ctx, idx, "memory query failed: ", c);
    if (st != GPUPROBE_OK || c->why[0])
        return st;
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    st = gp_plan_on(ctx, dev, &c->mem, r->model, r->plan, &p);
    if (st != GPUPROBE_OK)
        return left(ctx, st, c, "the model's plan failed: ", "");
    c->need = p.total_bytes;
    if (p.fits) {
        c->room = p.available_bytes - p.total_bytes;
        return GPUPROBE_OK;
    }
    char a[32], b[32];
    gp_format_bytes(a, sizeof a, p.total_bytes);
    gp_format_bytes(b, sizeof b, p.available_bytes);
    gp_snprintf(c->why, sizeof c->why, "the model needs %s > %s available", a, b);
    return GPUPROBE_OK;
}

/*
 * Check device idx against the requirements, in order: compute capability,
 * utilisation, other processes, free memory, fit, model. need_free: read free
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
    if (st == GPUPROBE_OK && !c->why[0])
        st = check_model(ctx, idx, dev, r, c);
    c->ok = st == GPUPROBE_OK && !c->why[0];
    return st;
}

/* A GPU's utilisation for breaking a tie: 0-100, or 101 when unknown (it
 * then counts as the busiest). */
static int utilization(gpuprobe_context *ctx, size_t idx)
{
    int64_t v = 0;
    if (gp_device_nvml_int(ctx, idx, GPUPROBE_ATTR_GPU_UTILIZATION, &v, NULL, 0) != GPUPROBE_OK ||
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
    if (s->kind == GP_SPEC_CUDA_N)
        gp_snprintf(s->head, sizeof s->head, "cuda:%d", s->want);
    else
        gp_snprintf(s->head, sizeof s->head, "%s", spec_word(s->kind));
    if (from_env)
        gp_appendf(s->head, sizeof s->head, " (from GPUPROBE_DEVICE)");
    return GPUPROBE_OK;
}

/* What exists, and is CUDA usable (and if not, why, in words)? */
static gpuprobe_status survey(selection *s)
{
    gpuprobe_context *ctx = s->ctx;
    gpuprobe_status st = gp_enumerate(ctx);
    if (st != GPUPROBE_OK)
        return st;
    s->count = ctx->ndevices;
    s->cause = ctx->cuda_cause;
    const char *detail = ctx->cuda_detail;
    if (detail[0])
        gp_snprintf(s->why_cuda, sizeof s->why_cuda, "%s: %.*s",
                    gpuprobe_cuda_cause_string(s->cause), DETAIL_SHOWN, detail);
    else
        gp_snprintf(s->why_cuda, sizeof s->why_cuda, "%s",
                    gpuprobe_cuda_cause_string(s->cause));
    for (size_t i = 0; i < s->count; i++) {
        const gp_device *d = &ctx->devices[i];
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
    uint64_t key;                /* free memory, or with a model the room it leaves */
    uint64_t need;               /* with a model: its total on the best device */
    int util;                    /* read on a tie only; 101: unknown; -1: not read */
    char tie[NAME_SHOWN + 128];  /* how a tie was broken */
    char fails[GP_ERR_LEN];      /* "label: why; label: why" */
} ranking;

/* Candidate i (which meets the requirements) against the best so far: the
 * larger key (free memory, or the room a model leaves) wins; on a tie the
 * less busy GPU. */
static void rank(gpuprobe_context *ctx, ranking *k, size_t i, const gp_device *d,
                 const req_t *r, const cand *c)
{
    uint64_t f = r->model ? c->room : c->free_bytes;
    k->nfit++;
    int better = !k->dev || f > k->key;
    if (!better && f == k->key) {
        if (k->util < 0)
            k->util = utilization(ctx, k->idx);
        int u = utilization(ctx, i);
        if (u < k->util) {
            char other[NAME_SHOWN + 48], was[16] = "unknown";
            device_label(other, sizeof other, k->dev);
            if (k->util <= 100)
                gp_snprintf(was, sizeof was, "%d%%", k->util);
            gp_snprintf(k->tie, sizeof k->tie, "; as much %s as %s, less busy (%d%%, not %s)",
                        r->model ? "room" : "free", other, u, was);
            better = 1;
            k->util = u;
        }
    } else if (better) {
        k->util = -1;
        k->tie[0] = '\0';
    }
    if (better) {
        k->idx = i;
        k->key = f;
        k->need = c->need;
        k->dev = d;
    }
}

/* "auto" and "cuda": every CUDA device evaluated and ranked. */
static gpuprobe_status rank_cuda(selection *s, ranking *k)
{
    memset(k, 0, sizeof *k);
    k->util = -1;
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
            rank(s->ctx, k, i, d, &s->r, &c);
        } else {
            char label[NAME_SHOWN + 48];
            device_label(label, sizeof label, d);
            gp_appendf(k->fails, sizeof k->fails, "%s%s: %s", k->fails[0] ? "; " : "",
                       label, c.why);
        }
    }
    return GPUPROBE_OK;
}

/* The reason for the best CUDA device. */
static gpuprobe_status pick_best(selection *s, const ranking *k, size_t *device,
                                 const char **reason)
{
    char *out = s->ctx->reason, label[NAME_SHOWN + 48], fb[96], a[32], b[32];
    size_t size = sizeof s->ctx->reason;
    device_label(label, sizeof label, k->dev);
    gp_format_bytes(a, sizeof a, k->key);
    gp_format_bytes(b, sizeof b, k->need);
    if (s->r.model)
        gp_snprintf(fb, sizeof fb, "%s left after the model's %s", a, b);
    else
        gp_snprintf(fb, sizeof fb, "%s free", a);
    out[0] = '\0';
    if (k->nfit == 1 && s->ncuda == 1)
        gp_appendf(out, size, "%s: %s, %s, the only CUDA device", s->head, label, fb);
    else if (k->nfit == 1)
        gp_appendf(out, size, "%s: %s, %s, the only CUDA device that %s", s->head, label, fb,
                   s->has_req ? "meets the requirements" : "could be used");
    else if (s->r.model)
        gp_appendf(out, size, "%s: %s has the most room for the model (%s) of %zu CUDA "
                   "devices that hold it", s->head, label, fb, k->nfit);
    else
        gp_appendf(out, size, "%s: %s has the most free memory (%s) of %zu CUDA devices%s",
                   s->head, label, a, k->nfit,
                   s->has_req ? " that meet the requirements" : "");
    gp_appendf(out, size, "%s", k->tie);
    if (k->fails[0])
        gp_appendf(out, size, "; skipped %s", k->fails);
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
    if (!c.ok) {
        char msg[GP_ERR_LEN] = "";
        if (s->cuda_usable) {
            append_cut(msg, sizeof msg, k->fails, 300);
            gp_appendf(msg, sizeof msg, "; ");
        } else {
            gp_appendf(msg, sizeof msg, "CUDA not usable (%s); ", s->why_cuda);
        }
        gp_appendf(msg, sizeof msg, "cpu: %s", c.why);
        return gp_fail(s->ctx, GPUPROBE_ERR_NO_FIT, "%s", msg);
    }
    char *out = s->ctx->reason;
    size_t size = sizeof s->ctx->reason;
    out[0] = '\0';
    if (s->cuda_usable) {
        gp_appendf(out, size, "%s: no CUDA device %s (", s->head,
                   s->has_req ? "meets the requirements" : "could be used");
        append_cut(out, size, k->fails, 380);
        gp_appendf(out, size, "); using cpu");
    } else {
        gp_appendf(out, size, "%s: CUDA not usable (%s); using cpu", s->head, s->why_cuda);
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
                s.r.fit_params > 0 || s.r.max_util >= 0 || s.r.no_other || s.r.model;
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
