/*
 * gpuprobe-smi - every GPU here as nvidia-smi lists it, and the CPU; why
 * CUDA is not usable when it is not. See gpuprobe-smi(1) and docs/json.md.
 *
 * The GPUs are the ones NVML knows (libgpuprobe's GPU snapshot), numbered
 * as nvidia-smi numbers them, whether or not CUDA sees them in this
 * process; each says which cuda:N it is here. A header box gives the
 * driver's version and CUDA versions; the GPU table their memory in MiB
 * (as nvidia-smi writes it), health and link; a table of the MIG devices
 * of GPUs in MIG mode, every one NVML knows, with its profile, ids, memory
 * and the cuda:N CUDA gives it here (if any); a process table from NVML's
 * compute and graphics lists, with the user and command line from /proc.
 * Then the CPU: model, cores, SIMD level, OpenBLAS, RAM (cgroup-aware).
 * No CUDA context is created: memory is read through NVML, and only when
 * NVML cannot answer is a CUDA device's memory read inside a context (the
 * output says so).
 *
 * Also: -i (some GPUs only), --query-gpu with --format=csv (nvidia-smi's
 * field names), -l (a refresh loop that ends on SIGINT or SIGTERM, on a
 * write error, or after --count refreshes), --json (memory in bytes).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"
#include "fields.h"
#include "procinfo.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum { OPT_ID, OPT_QUERY, OPT_FORMAT, OPT_LOOP, OPT_COUNT, OPT_HELP_QUERY, OPT_BANDWIDTH, OPT_BYTES,
       OPT_JSON };

static const cli_option options[] = {
    [OPT_ID] = {"id", "ID", "only these GPUs: NVML index (as nvidia-smi -i), UUID or PCI bus id, a,b,c", 'i'},
    [OPT_QUERY] = {"query-gpu", "FIELDS", "print these fields of each GPU, one line each (see --help-query-gpu)", 0},
    [OPT_FORMAT] = {"format", "FORMAT", "with --query-gpu: csv, with noheader and/or nounits: csv,noheader", 0},
    [OPT_LOOP] = {"loop", "SECONDS", "print again every SECONDS until SIGINT or SIGTERM (or --count)", 'l'},
    [OPT_COUNT] = {"count", "N", "with --loop: stop after N refreshes", 0},
    [OPT_HELP_QUERY] = {"help-query-gpu", NULL, "list the fields --query-gpu takes and exit", 0},
    [OPT_BANDWIDTH] = {"bandwidth", NULL, "also measure each device's bandwidth (seconds of work; never by default)", 0},
    [OPT_BYTES] = {"bytes", "SIZE", "with --bandwidth: bytes of each buffer (default: the size rule)", 0},
    [OPT_JSON] = {"json", NULL, "print one JSON object instead of text (with --loop: one a line)", 0},
    {NULL, NULL, NULL, 0},
};

/* What the command line asked for. */
static struct {
    const char *id;                  /* -i, or NULL: every GPU */
    const smi_field *fields[SMI_MAX_FIELDS];
    size_t nfields;                  /* --query-gpu; 0: the tables */
    int format, noheader, nounits;   /* --format */
    double loop;                     /* --loop seconds; 0: once */
    uint64_t count;                  /* --count; 0: until a signal */
    int help_query;
    int bandwidth;                   /* --bandwidth */
    uint64_t bytes;                  /* --bytes; 0: the size rule */
} want;

/* ---- the command line ---------------------------------------------------------- */

static int parse_format(const char *value)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", value);
    int first = 1, ok = strlen(value) < sizeof buf;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); ok && t;
         t = strtok_r(NULL, ",", &save), first = 0) {
        if (first)
            ok = strcmp(t, "csv") == 0;
        else if (strcmp(t, "noheader") == 0)
            want.noheader = 1;
        else if (strcmp(t, "nounits") == 0)
            want.nounits = 1;
        else
            ok = 0;
    }
    if (!ok || first)
        return cli_bad_value(value, "--format wants csv, then noheader or nounits (csv,noheader)");
    want.format = 1;
    return CLI_EXIT_OK;
}

static int parse_seconds(const char *value)
{
    char *end = NULL;
    errno = 0;
    double s = strtod(value, &end);
    if (errno || end == value || *end || !isfinite(s) || !(s > 0) || s > 86400)
        return cli_bad_value(value, "--loop wants seconds above 0, at most 86400 (2, 0.5)");
    want.loop = s;
    return CLI_EXIT_OK;
}

static int option(int opt, const char *value)
{
    char bad[80];
    switch (opt) {
    case OPT_ID:
        want.id = value;
        return CLI_EXIT_OK;
    case OPT_QUERY:
        if (smi_fields_parse(value, want.fields, SMI_MAX_FIELDS, &want.nfields, bad,
                             sizeof bad) != 0)
            return cli_bad_value(bad, "--query-gpu wants fields --help-query-gpu lists");
        return CLI_EXIT_OK;
    case OPT_FORMAT:
        return parse_format(value);
    case OPT_LOOP:
        return parse_seconds(value);
    case OPT_COUNT:
        if (cli_parse_count(value, UINT32_MAX, &want.count) != 0 || want.count == 0)
            return cli_bad_value(value, "--count wants a number of refreshes from 1");
        return CLI_EXIT_OK;
    case OPT_HELP_QUERY:
        want.help_query = 1;
        return CLI_EXIT_OK;
    case OPT_BANDWIDTH:
        want.bandwidth = 1;
        return CLI_EXIT_OK;
    case OPT_BYTES: {
        int64_t lo = 0, hi = 0;
        gpuprobe_bandwidth_param_bounds(GPUPROBE_BANDWIDTH_BUFFER_BYTES, &lo, &hi);
        if (cli_parse_size(value, (uint64_t)hi, &want.bytes) != 0 || want.bytes < 4096)
            return cli_bad_value(value, "--bytes wants a size from 4096 bytes to 1TiB, e.g. 256MiB");
        return CLI_EXIT_OK;
    }
    default: /* --json: cli_next() takes it */
        return CLI_EXIT_OK;
    }
}

static int check(void)
{
    if (want.nfields && !want.format)
        return cli_usage_error("--query-gpu needs --format=csv (or csv,noheader, csv,nounits)");
    if (want.format && !want.nfields)
        return cli_usage_error("--format goes with --query-gpu");
    if (want.nfields && cli_json())
        return cli_usage_error("--query-gpu and --json: choose one");
    if (want.count && want.loop == 0)
        return cli_usage_error("--count goes with --loop");
    if (want.bytes && !want.bandwidth)
        return cli_usage_error("--bytes goes with --bandwidth");
    if (want.bandwidth && (want.nfields || want.loop > 0))
        return cli_usage_error("--bandwidth measures once: not with --query-gpu or --loop");
    if (want.id && (!want.id[0] || strstr(want.id, ",,") || want.id[0] == ',' ||
                    want.id[strlen(want.id) - 1] == ','))
        return cli_bad_value(want.id, "-i wants GPUs separated by commas (0,2)");
    return CLI_EXIT_OK;
}

/* ---- one reading: the devices, their memory, the GPUs NVML knows ----------------- */

typedef struct meminfo {
    gpuprobe_status st;
    gpuprobe_memory_info m;
    char *error; /* the library's message when st is not GPUPROBE_OK */
} meminfo;

typedef struct view {
    cli_probe pr;
    size_t n;               /* library devices, the CPU first */
    meminfo *mem;           /* per device; NULL for --query-gpu */
    gpuprobe_gpus *g;       /* NULL: NVML cannot say (gpus_st, why, message) */
    gpuprobe_status gpus_st;
    char *why;              /* "the GPUs NVML knows: <status>: <message>" */
    char *message;          /* the library's message */
    unsigned char *shown;   /* per NVML GPU: selected */
    unsigned char *own_row; /* per device: a CUDA device no NVML GPU or MIG device is */
    struct timespec now;    /* when it was read */
    int failed;             /* a query failed: exit status 1 */
} view;

static int64_t int_or(gpuprobe_context *ctx, size_t i, gpuprobe_attr attr)
{
    int64_t v = -1;
    if (gpuprobe_device_get_int(ctx, i, attr, &v) != GPUPROBE_OK)
        v = -1;
    return v;
}

static int64_t gpu_int(const gpuprobe_gpus *g, size_t i, gpuprobe_gpu_field f)
{
    int64_t v = -1;
    if (gpuprobe_gpus_get_int(g, i, f, &v) != GPUPROBE_OK)
        v = -1;
    return v;
}

static const char *gpu_str(const gpuprobe_gpus *g, size_t i, gpuprobe_gpu_field f)
{
    const char *s = NULL;
    return gpuprobe_gpus_get_string(g, i, f, &s) == GPUPROBE_OK ? s : NULL;
}

static void query_memory(gpuprobe_context *ctx, view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        /* The spec first: the next call on the context ends the message
         * of a failed one. */
        const char *spec = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &spec);
        meminfo *m = &v->mem[i];
        m->m = (gpuprobe_memory_info)GPUPROBE_MEMORY_INFO_INIT;
        m->st = gpuprobe_device_memory(ctx, i, &m->m, 0);
        if (m->st != GPUPROBE_OK) {
            m->error = strdup(gpuprobe_last_error(ctx));
            cli_report(ctx, m->st, "%s: memory query", spec);
            v->failed = 1;
        }
    }
}

/* Which CUDA devices an NVML GPU or MIG device is: the others get rows of
 * their own. */
static void mark_own_rows(gpuprobe_context *ctx, view *v)
{
    for (size_t d = 1; d < v->n; d++)
        v->own_row[d] = int_or(ctx, d, GPUPROBE_ATTR_KIND) == GPUPROBE_DEVICE_CUDA;
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++) {
        int64_t c = gpu_int(v->g, i, GPUPROBE_GPU_CUDA_INDEX);
        if (c >= 0 && (size_t)c + 1 < v->n)
            v->own_row[c + 1] = 0;
        gpuprobe_mig_device m = GPUPROBE_MIG_DEVICE_INIT;
        for (size_t k = 0; gpuprobe_gpus_mig_device(v->g, i, k, &m) == GPUPROBE_OK; k++)
            if (m.cuda_index >= 0 && (size_t)m.cuda_index + 1 < v->n)
                v->own_row[m.cuda_index + 1] = 0;
    }
}

/* ---- -i: which GPUs ------------------------------------------------------------------ */

/* "dddd:bb:dd.f" or "bb:dd.f" as numbers: 0, or -1. */
static int parse_bus(const char *s, unsigned long long *key)
{
    unsigned dom = 0, bus, dev, fn;
    char tail;
    if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 &&
        (dom = 0, sscanf(s, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3))
        return -1;
    if (bus > 0xff || dev > 0x1f || fn > 7)
        return -1;
    *key = (unsigned long long)dom << 16 | bus << 8 | dev << 3 | fn;
    return 0;
}

/* Does GPU i of the snapshot answer to id (a UUID, its own or one of its
 * MIG devices', or a bus id)? */
static int gpu_is(const gpuprobe_gpus *g, size_t i, const char *id)
{
    const char *uuid = gpu_str(g, i, GPUPROBE_GPU_UUID), *bus = gpu_str(g, i, GPUPROBE_GPU_PCI_BUS_ID);
    unsigned long long a, b;
    if (uuid && strcasecmp(uuid, id) == 0)
        return 1;
    gpuprobe_mig_device m = GPUPROBE_MIG_DEVICE_INIT;
    for (size_t k = 0; gpuprobe_gpus_mig_device(g, i, k, &m) == GPUPROBE_OK; k++)
        if (strcasecmp(m.uuid, id) == 0)
            return 1;
    return bus && parse_bus(id, &a) == 0 && parse_bus(bus, &b) == 0 && a == b;
}

static int device_is(gpuprobe_context *ctx, size_t d, const char *id)
{
    const char *uuid = NULL, *bus = NULL;
    unsigned long long a, b;
    if (gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_UUID, &uuid) == GPUPROBE_OK &&
        strcasecmp(uuid, id) == 0)
        return 1;
    return gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_PCI_BUS_ID, &bus) == GPUPROBE_OK &&
           parse_bus(id, &a) == 0 && parse_bus(bus, &b) == 0 && a == b;
}

/* One entry of -i: the GPUs (and own rows) it selects, or a usage error. */
static int select_one(gpuprobe_context *ctx, view *v, const char *id)
{
    size_t count = gpuprobe_gpus_count(v->g), found = 0;
    int index = id[0] && strspn(id, "0123456789") == strlen(id);
    unsigned long long key;
    if (!index && strncasecmp(id, "GPU-", 4) != 0 && strncasecmp(id, "MIG-", 4) != 0 &&
        parse_bus(id, &key) != 0)
        return cli_bad_value(id, "-i wants a GPU's index, UUID or PCI bus id");
    for (size_t i = 0; i < count; i++) {
        int is = index ? strtoull(id, NULL, 10) == (unsigned long long)i : gpu_is(v->g, i, id);
        v->shown[i] |= (unsigned char)(is << 1);
        found += is != 0;
    }
    for (size_t d = 1; !index && d < v->n; d++)
        if (v->own_row[d] & 1 && device_is(ctx, d, id)) {
            v->own_row[d] |= 2;
            found++;
        }
    if (found)
        return CLI_EXIT_OK;
    char echo[CLI_ECHO_MAX + 4];
    id = cli_echo(echo, sizeof echo, id);
    if (!v->g)
        return cli_usage_error("-i: no GPU is '%s' here (and NVML, which numbers them, is not "
                               "usable)", id);
    if (index)
    if (index && count == 0)
        return cli_usage_error("-i: no GPU has index %s (NVML knows no GPU)", id);
    if (index)
        return cli_usage_error("-i: no GPU has index %s (NVML knows GPU%s 0%s%.0zu)", id,
                               count == 1 ? "" : "s", count == 1 ? "" : " to ", count - 1);
    return cli_usage_error("-i: no GPU or MIG device is '%s'", id);
}

/* shown[]/own_row[] bit 1: listed (bit 0 of own_row: a row of its own). */
static int select_gpus(gpuprobe_context *ctx, view *v)
{
    size_t count = gpuprobe_gpus_count(v->g);
    if (!want.id) {
        memset(v->shown, 2, count);
        for (size_t d = 1; d < v->n; d++)
            v->own_row[d] |= (unsigned char)(v->own_row[d] << 1);
        return CLI_EXIT_OK;
    }
    char *list = strdup(want.id);
    if (!list)
        return cli_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "reading -i");
    int rc = CLI_EXIT_OK;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t && rc == CLI_EXIT_OK;
         t = strtok_r(NULL, ",", &save))
        rc = select_one(ctx, v, t);
    free(list);
    return rc;
}

#define SHOWN(v, i) (((v)->shown[i] & 2) != 0)
#define OWN_ROW(v, d) (((v)->own_row[d] & 3) == 3)

static void view_free(view *v)
{
    for (size_t i = 0; v->mem && i < v->n; i++)
        free(v->mem[i].error);
    free(v->mem);
    gpuprobe_gpus_destroy(v->g);
    free(v->why);
    free(v->message);
    free(v->shown);
    free(v->own_row);
}

static int view_read(gpuprobe_context *ctx, view *v)
{
    memset(v, 0, sizeof *v);
    clock_gettime(CLOCK_REALTIME, &v->now);
    int rc = cli_probe_cuda(ctx, &v->pr);
    if (rc != CLI_EXIT_OK)
        return rc;
    gpuprobe_status st = gpuprobe_device_count(ctx, &v->n);
    if (st != GPUPROBE_OK)
        return cli_fail(ctx, st, "counting devices");
    v->mem = want.nfields ? NULL : calloc(v->n, sizeof *v->mem);
    v->own_row = calloc(v->n, 1);
    if ((!want.nfields && !v->mem) || !v->own_row)
        return cli_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "reading the devices");
    if (v->mem)
        query_memory(ctx, v);
    st = gpuprobe_gpus_read(ctx, 0, &v->g);
    v->gpus_st = st;
    if (st != GPUPROBE_OK) {
        v->message = strdup(gpuprobe_last_error(ctx));
        v->why = cli_status_text(ctx, st, "the GPUs NVML knows");
        if (st != GPUPROBE_ERR_UNSUPPORTED) { /* NVML is there, and failed */
            cli_report(ctx, st, "the GPUs NVML knows");
            v->failed = 1;
        }
    }
    v->shown = calloc(gpuprobe_gpus_count(v->g) + 1, 1);
    if (!v->shown)
        return cli_fail(ctx, GPUPROBE_ERR_OUT_OF_MEMORY, "reading the devices");
    mark_own_rows(ctx, v);
    return select_gpus(ctx, v);
}

/* ---- tables -------------------------------------------------------------------------- */

/* A table: the widths of its cells' text (each cell has a blank on either
 * side and '|' between): every row and rule is as wide as the others. */
typedef struct table {
    const int *w;
    size_t n;
} table;

static const int gpu_w[] = {43, 22, 23};
static const table gpu_table = {gpu_w, 3};
static const int mig_w[] = {16, 20, 24, 25};
static const table mig_table = {mig_w, 4};
static const int full_w[] = {94};
static const table full_table = {full_w, 1};

/* "+-----+----+", "|=====+====|" or "|-----+----|". */
static void rule(const table *t, char fill, char edge)
{
    char buf[256];
    size_t k = 0;
    for (size_t c = 0; c < t->n; c++) {
        buf[k++] = c == 0 ? edge : '+';
        for (int i = 0; i < t->w[c] + 2; i++)
            buf[k++] = fill;
    }
    buf[k++] = edge;
    buf[k] = '\0';
    cli_line("%s", buf);
}

/* One row: cells[c] is already as wide as its cell (cli_fit()); cells
 * from `span` on are one cell (cells[span] fills it). */
static void row_span(const table *t, const char *const *cells, size_t span, cli_style_id style)
{
    cli_put("|");
    cli_style(style);
    for (size_t c = 0; c < t->n && c <= span; c++) {
        if (c)
            cli_put("|");
        cli_put(" %s ", cells[c]);
        if (c == span)
            break;
    }
    cli_style(CLI_PLAIN);
    cli_line("|");
}

static void row(const table *t, const char *const *cells, cli_style_id style)
{
    row_span(t, cells, t->n - 1, style);
}

/* A row of one cell across the whole table. */
static void wide_row(const table *t, const char *text, cli_style_id style)
{
    int w = -3;
    for (size_t c = 0; c < t->n; c++)
        w += t->w[c] + 3;
    char buf[512];
    const char *cells[1] = {cli_fit(buf, sizeof buf, text, (size_t)w, 0)};
    row_span(t, cells, 0, style);
}

/* A cell of table t, column c, from a printf format, fitted. */
static const char *cell(char *buf, size_t size, const table *t, size_t c, const char *fmt, ...)
    CLI_PRINTF(5, 6);
static const char *cell(char *buf, size_t size, const table *t, size_t c, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return cli_fit(buf, size, text, (size_t)t->w[c], 0);
}

/* Text of any length cut to at most max columns (not padded). */
static const char *cut(char *buf, size_t size, const char *s, size_t max)
{
    size_t w = cli_width(s);
    return cli_fit(buf, size, s, w < max ? w : max, 0);
}

/* Figures: "N/A" for unknown, else the number with its unit. */
static void fig(char *buf, size_t size, int64_t v, const char *unit)
{
    if (v < 0)
        snprintf(buf, size, "N/A");
    else
        snprintf(buf, size, "%lld%s", (long long)v, unit);
}

static void mib(char *buf, size_t size, int64_t bytes)
{
    if (bytes < 0)
        snprintf(buf, size, "N/A");
    else
        cli_mib(buf, size, (uint64_t)bytes);
}

static void power(char *buf, size_t size, int64_t mw, int64_t limit)
{
    char a[32], b[32];
    fig(a, sizeof a, mw < 0 ? -1 : (mw + 500) / 1000, "W");
    fig(b, sizeof b, limit < 0 ? -1 : (limit + 500) / 1000, "W");
    snprintf(buf, size, "%5s / %5s", a, b);
}

/* ---- the header box and the GPU table ----------------------------------------------- */

static void header_box(const view *v)
{
    char dv[32] = "N/A", rv[32] = "N/A", text[256];
    const char *driver = NULL;
    for (size_t i = 0; !driver && i < gpuprobe_gpus_count(v->g); i++)
        driver = gpu_str(v->g, i, GPUPROBE_GPU_DRIVER_VERSION);
    if (v->pr.have_drv)
        gp_format_cuda_version(dv, sizeof dv, v->pr.drv);
    if (v->pr.have_rt)
        gp_format_cuda_version(rv, sizeof rv, v->pr.rt);
    snprintf(text, sizeof text, "gpuprobe-smi %-12s Driver Version: %-17s CUDA Version: %s (runtime %s)",
             gpuprobe_version_string(), driver ? driver : "N/A", dv, rv);
    rule(&full_table, '-', '+');
    wide_row(&full_table, text, CLI_BOLD);
    wide_row(&full_table, "Memory in MiB (1 MiB = 1048576 bytes), as nvidia-smi writes it; --json gives bytes",
             CLI_PLAIN);
}

static void gpu_header(void)
{
    char a[4][160];
    const char *l1[3] = {cell(a[0], sizeof a[0], &gpu_table, 0, "%3s  %-30s %s", "GPU", "Name", "CUDA"),
                         cell(a[1], sizeof a[1], &gpu_table, 1, "%-12s %9s", "Bus-Id", "PCIe"),
                         cell(a[2], sizeof a[2], &gpu_table, 2, "%4s %7s %10s", "Util", "MemUtil",
                              "MIG M.")};
    rule(&gpu_table, '-', '|');
    row(&gpu_table, l1, CLI_BOLD);
    char b[3][160];
    const char *l2[3] = {cell(b[0], sizeof b[0], &gpu_table, 0, "%4s   %13s   CC", "Temp",
                              "Pwr:Usage/Cap"),
                         cell(b[1], sizeof b[1], &gpu_table, 1, "%22s", "Memory-Usage"),
                         cell(b[2], sizeof b[2], &gpu_table, 2, "%5s %17s", "Procs", "Free")};
    row(&gpu_table, l2, CLI_BOLD);
    rule(&gpu_table, '=', '|');
}

/* What a GPU row shows, from NVML (a GPU of the snapshot) or from the
 * library's CUDA device (a device no NVML GPU is). */
typedef struct gpu_line {
    char index[32], name[256], cuda[32], bus[32], pcie[48], power[80];
    char util[32], mutil[32], mig[32], temp[32], cc[48];
    char usage[80], procs[32], free_s[32];
    int seen; /* CUDA sees it here */
} gpu_line;

static void gpu_row(const gpu_line *l)
{
    char a[3][160], name[4 * 30 + 1];
    cli_fit(name, sizeof name, l->name, 30, 0);
    const char *l1[3] = {cell(a[0], sizeof a[0], &gpu_table, 0, "%3s  %s %s", l->index, name, l->cuda),
                         cell(a[1], sizeof a[1], &gpu_table, 1, "%-12s %9s", l->bus, l->pcie),
                         cell(a[2], sizeof a[2], &gpu_table, 2, "%4s %7s %10s", l->util, l->mutil,
                              l->mig)};
    /* cell() fits the whole, name included: a name with escapes keeps its
     * columns, since cli_fit() counts them. */
    char b[3][160];
    const char *l2[3] = {cell(b[0], sizeof b[0], &gpu_table, 0, "%4s   %13s   %s", l->temp, l->power,
                              l->cc),
                         cell(b[1], sizeof b[1], &gpu_table, 1, "%22s", l->usage),
                         cell(b[2], sizeof b[2], &gpu_table, 2, "%5s %17s", l->procs, l->free_s)};
    cli_style_id style = l->seen ? CLI_PLAIN : CLI_DIM;
    row(&gpu_table, l1, style);
    row(&gpu_table, l2, style);
    rule(&gpu_table, '-', '+');
}

static void usage_text(char *buf, size_t size, int64_t used, int64_t total)
{
    char u[32], t[32];
    mib(u, sizeof u, used);
    mib(t, sizeof t, total);
    snprintf(buf, size, "%s / %s", u, t);
}

static void cuda_text(char *buf, size_t size, int64_t ordinal)
{
    if (ordinal >= 0)
        snprintf(buf, size, "cuda:%lld", (long long)ordinal);
    else
        snprintf(buf, size, "-");
}

/* GPU i of the snapshot. */
static void nvml_line(const gpuprobe_gpus *g, size_t i, gpu_line *l)
{
    const char *name = gpu_str(g, i, GPUPROBE_GPU_NAME), *bus = gpu_str(g, i, GPUPROBE_GPU_PCI_BUS_ID);
    int64_t mig = gpu_int(g, i, GPUPROBE_GPU_MIG_MODE), cuda = gpu_int(g, i, GPUPROBE_GPU_CUDA_INDEX);
    int64_t total = gpu_int(g, i, GPUPROBE_GPU_TOTAL_BYTES), reserved = gpu_int(g, i, GPUPROBE_GPU_RESERVED_BYTES);
    int64_t gen = gpu_int(g, i, GPUPROBE_GPU_PCIE_GEN), width = gpu_int(g, i, GPUPROBE_GPU_PCIE_WIDTH);
    int64_t major = gpu_int(g, i, GPUPROBE_GPU_CC_MAJOR), minor = gpu_int(g, i, GPUPROBE_GPU_CC_MINOR);
    memset(l, 0, sizeof *l);
    fig(l->index, sizeof l->index, gpu_int(g, i, GPUPROBE_GPU_INDEX), "");
    snprintf(l->name, sizeof l->name, "%s", name ? name : "N/A");
    cuda_text(l->cuda, sizeof l->cuda, cuda);
    l->seen = cuda >= 0;
    snprintf(l->bus, sizeof l->bus, "%s", bus ? bus : "N/A");
    if (gen >= 0 && width >= 0)
        snprintf(l->pcie, sizeof l->pcie, "Gen%lld x%lld", (long long)gen, (long long)width);
    else
        snprintf(l->pcie, sizeof l->pcie, "N/A");
    fig(l->util, sizeof l->util, gpu_int(g, i, GPUPROBE_GPU_GPU_UTILIZATION), "%");
    fig(l->mutil, sizeof l->mutil, gpu_int(g, i, GPUPROBE_GPU_MEMORY_UTILIZATION), "%");
    snprintf(l->mig, sizeof l->mig, "%s", mig == 1 ? "Enabled" : mig == 0 ? "Disabled" : "N/A");
    fig(l->temp, sizeof l->temp, gpu_int(g, i, GPUPROBE_GPU_TEMPERATURE_C), "C");
    power(l->power, sizeof l->power, gpu_int(g, i, GPUPROBE_GPU_POWER_MW),
          gpu_int(g, i, GPUPROBE_GPU_POWER_LIMIT_MW));
    if (major >= 0 && minor >= 0)
        snprintf(l->cc, sizeof l->cc, "%lld.%lld", (long long)major, (long long)minor);
    else
        snprintf(l->cc, sizeof l->cc, "N/A");
    /* As nvidia-smi counts it: the driver's reserve in the total. */
    usage_text(l->usage, sizeof l->usage, gpu_int(g, i, GPUPROBE_GPU_USED_BYTES),
               total < 0 ? -1 : total + (reserved > 0 ? reserved : 0));
    fig(l->procs, sizeof l->procs, gpu_int(g, i, GPUPROBE_GPU_PROCESSES), "");
    mib(l->free_s, sizeof l->free_s, gpu_int(g, i, GPUPROBE_GPU_FREE_BYTES));
}

/* A CUDA device no NVML GPU is (NVML not usable, or not knowing it). */
static void cuda_line(gpuprobe_context *ctx, const view *v, size_t d, gpu_line *l)
{
    const char *name = "N/A", *bus = "N/A";
    const meminfo *m = &v->mem[d];
    int64_t major = int_or(ctx, d, GPUPROBE_ATTR_CC_MAJOR), minor = int_or(ctx, d, GPUPROBE_ATTR_CC_MINOR);
    int64_t mig = int_or(ctx, d, GPUPROBE_ATTR_MIG_MODE), total = int_or(ctx, d, GPUPROBE_ATTR_TOTAL_MEMORY);
    memset(l, 0, sizeof *l);
    gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_NAME, &name);
    gpuprobe_device_get_string(ctx, d, GPUPROBE_ATTR_PCI_BUS_ID, &bus);
    fig(l->index, sizeof l->index, int_or(ctx, d, GPUPROBE_ATTR_NVML_INDEX), "");
    if (l->index[0] == 'N')
        snprintf(l->index, sizeof l->index, "-");
    snprintf(l->name, sizeof l->name, "%s", name);
    cuda_text(l->cuda, sizeof l->cuda, int_or(ctx, d, GPUPROBE_ATTR_CUDA_INDEX));
    l->seen = 1;
    snprintf(l->bus, sizeof l->bus, "%s", bus);
    snprintf(l->pcie, sizeof l->pcie, "N/A");
    snprintf(l->util, sizeof l->util, "N/A");
    snprintf(l->mutil, sizeof l->mutil, "N/A");
    snprintf(l->mig, sizeof l->mig, "%s", mig == 1 ? "Enabled" : mig == 0 ? "Disabled" : "N/A");
    snprintf(l->temp, sizeof l->temp, "N/A");
    power(l->power, sizeof l->power, -1, -1);
    if (major >= 0 && minor >= 0)
        snprintf(l->cc, sizeof l->cc, "%lld.%lld", (long long)major, (long long)minor);
    else
        snprintf(l->cc, sizeof l->cc, "N/A");
    if (m->st == GPUPROBE_OK) {
        usage_text(l->usage, sizeof l->usage, (int64_t)m->m.used_bytes, (int64_t)m->m.total_bytes);
        mib(l->free_s, sizeof l->free_s, (int64_t)m->m.available_bytes);
    } else {
        char t[32];
        mib(t, sizeof t, total);
        snprintf(l->usage, sizeof l->usage, "? / %s", t);
        snprintf(l->free_s, sizeof l->free_s, "?");
    }
    snprintf(l->procs, sizeof l->procs, "N/A");
}

/* The GPU table under the header box, or the box's end when there is no
 * GPU; the rows it has. */
static size_t gpu_table_text(gpuprobe_context *ctx, const view *v)
{
    size_t rows = 0;
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++)
        rows += SHOWN(v, i);
    for (size_t d = 1; d < v->n; d++)
        rows += OWN_ROW(v, d);
    if (!rows) {
        rule(&full_table, '-', '+');
        return 0;
    }
    gpu_header();
    gpu_line l;
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++)
        if (SHOWN(v, i)) {
            nvml_line(v->g, i, &l);
            gpu_row(&l);
        }
    for (size_t d = 1; d < v->n; d++)
        if (OWN_ROW(v, d)) {
            cuda_line(ctx, v, d, &l);
            gpu_row(&l);
        }
    return rows;
}

/* ---- MIG devices ------------------------------------------------------------------------ */

static void mig_rows(const gpuprobe_gpus *g, size_t i)
{
    gpuprobe_mig_device m = GPUPROBE_MIG_DEVICE_INIT;
    for (size_t k = 0; gpuprobe_gpus_mig_device(g, i, k, &m) == GPUPROBE_OK; k++) {
        char a[4][160], ids[4][32], slices[32], usage[80], cuda[32], procs[32];
        size_t np = 0;
        gpuprobe_process p = GPUPROBE_PROCESS_INIT;
        for (size_t j = 0; gpuprobe_gpus_process(g, i, j, &p) == GPUPROBE_OK; j++)
            np += p.mig_index == m.mig_index;
        fig(ids[0], sizeof ids[0], gpu_int(g, i, GPUPROBE_GPU_INDEX), "");
        fig(ids[1], sizeof ids[1], m.mig_index, "");
        fig(ids[2], sizeof ids[2], m.gpu_instance_id, "");
        fig(ids[3], sizeof ids[3], m.compute_instance_id, "");
        if (m.slices < 0)
            snprintf(slices, sizeof slices, "N/A");
        else
            snprintf(slices, sizeof slices, "%d slice%s", (int)m.slices, m.slices == 1 ? "" : "s");
        usage_text(usage, sizeof usage,
                   m.used_bytes == GPUPROBE_UNKNOWN_BYTES ? -1 : (int64_t)m.used_bytes,
                   m.total_bytes == GPUPROBE_UNKNOWN_BYTES ? -1 : (int64_t)m.total_bytes);
        if (m.cuda_index >= 0)
            snprintf(cuda, sizeof cuda, "cuda:%d", (int)m.cuda_index);
        else
            snprintf(cuda, sizeof cuda, "not seen here");
        fig(procs, sizeof procs, gpu_int(g, i, GPUPROBE_GPU_PROCESSES) < 0 ? -1 : (int64_t)np, "");
        char profile[4 * 11 + 1];
        cli_fit(profile, sizeof profile, m.profile[0] ? m.profile : "N/A", 11, 0);
        const char *cells[4] = {
            cell(a[0], sizeof a[0], &mig_table, 0, "%3s %4s %3s %3s", ids[0], ids[1], ids[2], ids[3]),
            cell(a[1], sizeof a[1], &mig_table, 1, "%s %8s", profile, slices),
            cell(a[2], sizeof a[2], &mig_table, 2, "%24s", usage),
            cell(a[3], sizeof a[3], &mig_table, 3, "%-15s %9s", cuda, procs)};
        cli_style_id style = m.cuda_index >= 0 ? CLI_PLAIN : CLI_DIM;
        row(&mig_table, cells, style);
        char blank[32], uuid[4 * 75 + 1];
        const char *line2[2] = {cli_fit(blank, sizeof blank, "", 16, 0),
                                cli_fit(uuid, sizeof uuid, m.uuid[0] ? m.uuid : "N/A", 75, 0)};
        row_span(&mig_table, line2, 1, style);
        rule(&mig_table, '-', '+');
    }
}

static void mig_table_text(const view *v)
{
    size_t gpus = 0;
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++)
        gpus += SHOWN(v, i) && gpu_int(v->g, i, GPUPROBE_GPU_MIG_DEVICES) > 0;
    if (!gpus)
        return;
    cli_endl();
    rule(&full_table, '-', '+');
    wide_row(&full_table, "MIG devices (every one NVML knows; CUDA sees at most one a process)", CLI_BOLD);
    char a[4][160];
    const char *head[4] = {cell(a[0], sizeof a[0], &mig_table, 0, "%3s %4s %3s %3s", "GPU", "MIG", "GI", "CI"),
                           cell(a[1], sizeof a[1], &mig_table, 1, "%-11s %8s", "Profile", "Slices"),
                           cell(a[2], sizeof a[2], &mig_table, 2, "%24s", "Memory-Usage"),
                           cell(a[3], sizeof a[3], &mig_table, 3, "%-15s %9s", "CUDA here", "Procs")};
    rule(&mig_table, '-', '|');
    row(&mig_table, head, CLI_BOLD);
    char b[2][160];
    const char *head2[2] = {cli_fit(b[0], sizeof b[0], "", 16, 0), cli_fit(b[1], sizeof b[1], "UUID", 75, 0)};
    row_span(&mig_table, head2, 1, CLI_BOLD);
    rule(&mig_table, '=', '|');
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++)
        if (SHOWN(v, i))
            mig_rows(v->g, i);
}

/* ---- processes ------------------------------------------------------------------------- */

static const char *type_text(uint32_t type)
{
    return type == (GPUPROBE_PROCESS_COMPUTE | GPUPROBE_PROCESS_GRAPHICS) ? "C+G"
           : type == GPUPROBE_PROCESS_GRAPHICS                              ? "G"
                                                                            : "C";
}

/* One process row; 1 when /proc has no such process here. */
static int process_row(const gpuprobe_gpus *g, size_t i, const gpuprobe_process *p)
{
    char user[256], cmd[1024], ids[4][32], mem[32], pid[16], u[4 * 10 + 1], c[4 * 33 + 1], text[512];
    int here = smi_process_info(p->pid, user, sizeof user, cmd, sizeof cmd);
    fig(ids[0], sizeof ids[0], gpu_int(g, i, GPUPROBE_GPU_INDEX), "");
    snprintf(ids[1], sizeof ids[1], "%s", "-");
    snprintf(ids[2], sizeof ids[2], "%s", "-");
    snprintf(ids[3], sizeof ids[3], "%s", "-");
    if (p->mig_index >= 0)
        fig(ids[1], sizeof ids[1], p->mig_index, "");
    if (p->gpu_instance_id >= 0)
        fig(ids[2], sizeof ids[2], p->gpu_instance_id, "");
    if (p->compute_instance_id >= 0)
        fig(ids[3], sizeof ids[3], p->compute_instance_id, "");
    mib(mem, sizeof mem, p->used_bytes == GPUPROBE_UNKNOWN_BYTES ? -1 : (int64_t)p->used_bytes);
    snprintf(pid, sizeof pid, "%u%s", p->pid, here ? "" : "*");
    cli_fit(u, sizeof u, user, 10, 0);
    cli_fit(c, sizeof c, cmd, 33, 0);
    snprintf(text, sizeof text, "%4s %4s %4s %4s %9s  %-4s  %s  %s  %10s", ids[0], ids[1], ids[2],
             ids[3], pid, type_text(p->type), u, c, mem);
    wide_row(&full_table, text, here ? CLI_PLAIN : CLI_DIM);
    return !here;
}

static void process_table_text(const view *v)
{
    size_t gpus = 0, listed = 0, elsewhere = 0;
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++)
        gpus += SHOWN(v, i);
    if (!gpus)
        return;
    char head[256];
    snprintf(head, sizeof head, "%4s %4s %4s %4s %9s  %-4s  %-10s  %-33s  %10s", "GPU", "MIG", "GI",
             "CI", "PID", "Type", "User", "Command", "GPU Memory");
    cli_endl();
    rule(&full_table, '-', '+');
    wide_row(&full_table, "Processes (NVML's compute and graphics lists; user and command from /proc)", CLI_BOLD);
    wide_row(&full_table, head, CLI_BOLD);
    rule(&full_table, '=', '|');
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++) {
        if (!SHOWN(v, i))
            continue;
        if (gpu_int(v->g, i, GPUPROBE_GPU_PROCESSES) < 0) {
            char text[512];
            snprintf(text, sizeof text, "%4lld  processes unknown: %s",
                     (long long)gpu_int(v->g, i, GPUPROBE_GPU_INDEX),
                     gpuprobe_gpus_why(v->g, i, GPUPROBE_GPU_PROCESSES));
            wide_row(&full_table, text, CLI_DIM);
            continue;
        }
        gpuprobe_process p = GPUPROBE_PROCESS_INIT;
        for (size_t k = 0; gpuprobe_gpus_process(v->g, i, k, &p) == GPUPROBE_OK; k++, listed++)
            elsewhere += (size_t)process_row(v->g, i, &p);
    }
    if (!listed)
        wide_row(&full_table, "No running processes found", CLI_PLAIN);
    rule(&full_table, '-', '+');
    if (elsewhere)
        cli_line("*: not in this PID namespace (another container's, or the host's): the PID NVML "
                 "gives.");
}

/* ---- notes, the CPU ---------------------------------------------------------------------- */

/* Where the memory of the CUDA devices with rows of their own comes from. */
static void memory_notes(const view *v)
{
    for (size_t d = 1; d < v->n; d++) {
        const meminfo *m = &v->mem[d];
        if (!OWN_ROW(v, d) || m->st != GPUPROBE_OK ||
            m->m.source != GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT)
            continue;
        char cost[32] = "";
        if (m->m.flags & GPUPROBE_MEMORY_CONTEXT_MEASURED)
            cli_mib(cost, sizeof cost, m->m.context_bytes);
        cli_line("Memory of cuda:%zu: read inside a CUDA context, as NVML could not answer%s%s%s%s.",
                 d - 1, m->m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT ? " (created for it" : "",
                 cost[0] ? m->m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT ? "; it takes " : " (it takes " : "",
                 cost, m->m.flags & GPUPROBE_MEMORY_CREATED_CONTEXT || cost[0] ? ")" : "");
    }
}

/* How the GPUs are numbered, and where memory comes from. */
static void numbering_note(const view *v)
{
    char text[512], why[4 * 96 + 1];
    if (!v->g) {
        snprintf(text, sizeof text, "%s: no nvidia-smi index, health or processes.",
                 v->message ? v->message : "NVML cannot say");
        cli_line("%s", cut(why, sizeof why, text, 96));
        return;
    }
    cli_line("GPU: NVML's index, as nvidia-smi numbers GPUs (by PCI bus id); CUDA: this process's "
             "cuda:N.");
    int context = 0;
    for (size_t d = 1; d < v->n; d++)
        context |= OWN_ROW(v, d) && v->mem[d].st == GPUPROBE_OK &&
                   v->mem[d].m.source == GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT;
    if (!context)
        cli_line("Memory read through NVML: no CUDA context was created.");
}

static void cpu_text(gpuprobe_context *ctx, const meminfo *mem)
{
    const char *name = "?", *core = "?";
    int64_t cores = 0, simd = -1, threads = 0, khz = 0;
    gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, &name);
    gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_BLAS_CORE, &core);
    gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_LOGICAL_CORES, &cores);
    gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_SIMD, &simd);
    gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_BLAS_THREADS, &threads);
    int have_clock = gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_CLOCK_KHZ, &khz) == GPUPROBE_OK;
    char fitted[4 * 94 + 1];
    cli_endl();
    cli_line("CPU   %s", cut(fitted, sizeof fitted, name, 94));
    cli_put("      %lld logical cores, %s", (long long)cores, gp_simd_label(simd));
    if (have_clock)
        cli_put(", %.0f MHz", (double)khz / 1000.0);
    cli_endl();
    cli_line("BLAS  OpenBLAS %s, %lld thread%s", cut(fitted, sizeof fitted, core, 60),
             (long long)threads, threads == 1 ? "" : "s");
    if (mem->st != GPUPROBE_OK) {
        cli_line("RAM   ? (the query failed)");
        return;
    }
    char t[32], a[32], p[32];
    cli_mib(t, sizeof t, mem->m.total_bytes);
    cli_mib(a, sizeof a, mem->m.available_bytes);
    cli_mib(p, sizeof p, mem->m.physical_bytes);
    cli_put("RAM   %s total, %s available", t, a);
    if (mem->m.flags & GPUPROBE_MEMORY_CGROUP_LIMITED)
        cli_put(" (cgroup limit; the machine has %s)", p);
    cli_endl();
}

static void print_text(gpuprobe_context *ctx, const view *v, unsigned long refresh)
{
    if (want.loop > 0) {
        char when[64];
        struct tm tm;
        if (refresh)
            cli_endl();
        if (localtime_r(&v->now.tv_sec, &tm) && strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &tm))
            cli_line("%s", when);
    }
    header_box(v);
    size_t rows = gpu_table_text(ctx, v);
    if (v->pr.cause != GPUPROBE_CUDA_AVAILABLE) {
        char d[4 * 94 + 1];
        cli_line("No usable CUDA GPU: %s [%s]", gpuprobe_cuda_cause_string(v->pr.cause),
                 gpuprobe_cuda_cause_name(v->pr.cause));
        cli_line("  %s", cut(d, sizeof d, v->pr.detail, 94));
    }
    if (rows)
        numbering_note(v);
    memory_notes(v);
    mig_table_text(v);
    process_table_text(v);
    if (!want.id)
        cpu_text(ctx, &v->mem[0]);
}

/* ---- --query-gpu --------------------------------------------------------------------- */

static void print_csv(const view *v, unsigned long refresh)
{
    char buf[256];
    if (!want.noheader && refresh == 0) {
        for (size_t f = 0; f < want.nfields; f++)
            cli_put("%s%s", f ? ", " : "", smi_field_header(want.fields[f], buf, sizeof buf));
        cli_endl();
    }
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++) {
        if (!SHOWN(v, i))
            continue;
        for (size_t f = 0; f < want.nfields; f++) {
            smi_field_value(want.fields[f], v->g, i, &v->now, !want.nounits, buf, sizeof buf);
            cli_put("%s%s", f ? ", " : "", buf);
        }
        cli_endl();
    }
}

/* ---- JSON -------------------------------------------------------------------------------- */

static struct json_object *memory_json(const gpuprobe_memory_info *m)
{
    struct json_object *o = cli_obj();
    cli_set_u64(o, "total_bytes", m->total_bytes);
    cli_set_u64(o, "available_bytes", m->available_bytes);
    cli_set_u64(o, "physical_bytes", m->physical_bytes);
    if (m->cgroup_limit_bytes == UINT64_MAX)
        cli_set_null(o, "cgroup_limit_bytes");
    else
        cli_set_u64(o, "cgroup_limit_bytes", m->cgroup_limit_bytes);
    cli_set_u64(o, "context_bytes", m->context_bytes);
    cli_set_bool(o, "cgroup_limited", m->flags & GPUPROBE_MEMORY_CGROUP_LIMITED);
    cli_set_bool(o, "created_context", m->flags & GPUPROBE_MEMORY_CREATED_CONTEXT);
    cli_set_bool(o, "context_measured", m->flags & GPUPROBE_MEMORY_CONTEXT_MEASURED);
    cli_set_u64(o, "used_bytes", m->used_bytes);
    cli_set_u64(o, "reserved_bytes", m->reserved_bytes);
    cli_set_str(o, "source", m->source == GPUPROBE_MEMORY_SOURCE_NVML           ? "nvml"
                             : m->source == GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT ? "cuda_context"
                                                                                : "host");
    cli_set_bool(o, "context_held", m->context_held != 0);
    return o;
}

/* A CUDA device's health now: each member null when the driver cannot say. */
static struct json_object *health_json(gpuprobe_context *ctx, size_t i)
{
    static const struct {
        const char *key;
        gpuprobe_attr attr;
    } members[] = {
        {"gpu_utilization", GPUPROBE_ATTR_GPU_UTILIZATION},
        {"memory_utilization", GPUPROBE_ATTR_MEMORY_UTILIZATION},
        {"temperature_c", GPUPROBE_ATTR_TEMPERATURE_C},
        {"power_mw", GPUPROBE_ATTR_POWER_MW},
        {"power_limit_mw", GPUPROBE_ATTR_POWER_LIMIT_MW},
        {"compute_processes", GPUPROBE_ATTR_COMPUTE_PROCESSES},
        {"pcie_gen", GPUPROBE_ATTR_PCIE_GEN},
        {"pcie_width", GPUPROBE_ATTR_PCIE_WIDTH},
    };
    struct json_object *o = cli_obj();
    for (size_t k = 0; k < sizeof members / sizeof members[0]; k++) {
        int64_t v = int_or(ctx, i, members[k].attr);
        if (v < 0)
            cli_set_null(o, members[k].key);
        else
            cli_set_i64(o, members[k].key, v);
    }
    return o;
}

static void set_i64_or_null(struct json_object *o, const char *key, int64_t v, int known)
{
    if (known)
        cli_set_i64(o, key, v);
    else
        cli_set_null(o, key);
}

static void set_bytes(struct json_object *o, const char *key, uint64_t v)
{
    if (v == GPUPROBE_UNKNOWN_BYTES)
        cli_set_null(o, key);
    else
        cli_set_u64(o, key, v);
}

static struct json_object *mig_json(const gpuprobe_mig_device *m)
{
    struct json_object *o = cli_obj();
    cli_set_i64(o, "mig_index", m->mig_index);
    set_i64_or_null(o, "gpu_instance_id", m->gpu_instance_id, m->gpu_instance_id >= 0);
    set_i64_or_null(o, "compute_instance_id", m->compute_instance_id, m->compute_instance_id >= 0);
    cli_set_str(o, "uuid", m->uuid[0] ? m->uuid : NULL);
    cli_set_str(o, "name", m->name[0] ? m->name : NULL);
    cli_set_str(o, "profile", m->profile[0] ? m->profile : NULL);
    set_i64_or_null(o, "slices", m->slices, m->slices >= 0);
    set_i64_or_null(o, "multiprocessors", m->multiprocessors, m->multiprocessors >= 0);
    set_i64_or_null(o, "cuda_index", m->cuda_index, m->cuda_index >= 0);
    set_bytes(o, "total_bytes", m->total_bytes);
    set_bytes(o, "used_bytes", m->used_bytes);
    set_bytes(o, "free_bytes", m->free_bytes);
    return o;
}

static struct json_object *process_json(const gpuprobe_process *p)
{
    static const char *const types[] = {"unknown", "compute", "graphics", "compute+graphics"};
    char user[256], cmd[4096];
    int here = smi_process_info(p->pid, user, sizeof user, cmd, sizeof cmd);
    struct json_object *o = cli_obj();
    cli_set_u64(o, "pid", p->pid);
    cli_set_str(o, "type", types[p->type & 3]);
    set_bytes(o, "used_bytes", p->used_bytes);
    set_i64_or_null(o, "mig_index", p->mig_index, p->mig_index >= 0);
    set_i64_or_null(o, "gpu_instance_id", p->gpu_instance_id, p->gpu_instance_id >= 0);
    set_i64_or_null(o, "compute_instance_id", p->compute_instance_id, p->compute_instance_id >= 0);
    cli_set_bool(o, "in_namespace", here);
    cli_set_str(o, "user", here ? user : NULL);
    cli_set_str(o, "command", here ? cmd : NULL);
    return o;
}

/* GPU i of the snapshot: its facts (null when unknown), MIG devices and
 * processes (null when NVML could not list them). */
static struct json_object *gpu_json(const gpuprobe_gpus *g, size_t i)
{
    static const struct {
        const char *key;
        gpuprobe_gpu_field f;
    } ints[] = {
        {"index", GPUPROBE_GPU_INDEX},
        {"memory_total_bytes", GPUPROBE_GPU_TOTAL_BYTES},
        {"memory_used_bytes", GPUPROBE_GPU_USED_BYTES},
        {"memory_free_bytes", GPUPROBE_GPU_FREE_BYTES},
        {"memory_reserved_bytes", GPUPROBE_GPU_RESERVED_BYTES},
        {"gpu_utilization", GPUPROBE_GPU_GPU_UTILIZATION},
        {"memory_utilization", GPUPROBE_GPU_MEMORY_UTILIZATION},
        {"temperature_c", GPUPROBE_GPU_TEMPERATURE_C},
        {"power_mw", GPUPROBE_GPU_POWER_MW},
        {"power_limit_mw", GPUPROBE_GPU_POWER_LIMIT_MW},
        {"pcie_gen", GPUPROBE_GPU_PCIE_GEN},
        {"pcie_width", GPUPROBE_GPU_PCIE_WIDTH},
        {"pcie_max_gen", GPUPROBE_GPU_PCIE_MAX_GEN},
        {"pcie_max_width", GPUPROBE_GPU_PCIE_MAX_WIDTH},
    };
    struct json_object *o = cli_obj();
    int64_t v = 0, minor = 0;
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
    {
        v = gpu_int(g, i, ints[k].f);
        set_i64_or_null(o, ints[k].key, v, v >= 0);
    }
    cli_set_str(o, "uuid", gpu_str(g, i, GPUPROBE_GPU_UUID));
    cli_set_str(o, "name", gpu_str(g, i, GPUPROBE_GPU_NAME));
    cli_set_str(o, "pci_bus_id", gpu_str(g, i, GPUPROBE_GPU_PCI_BUS_ID));
    v = gpu_int(g, i, GPUPROBE_GPU_CUDA_INDEX);
    set_i64_or_null(o, "cuda_index", v, v >= 0);
    char cc[32];
    v = gpu_int(g, i, GPUPROBE_GPU_CC_MAJOR);
    minor = gpu_int(g, i, GPUPROBE_GPU_CC_MINOR);
    snprintf(cc, sizeof cc, "%lld.%lld", (long long)v, (long long)minor);
    cli_set_str(o, "compute_capability", v >= 0 && minor >= 0 ? cc : NULL);
    v = gpu_int(g, i, GPUPROBE_GPU_MIG_MODE);
    cli_set_str(o, "mig_mode", v == 1 ? "enabled" : v == 0 ? "disabled" : NULL);
    struct json_object *migs = cli_arr();
    gpuprobe_mig_device m = GPUPROBE_MIG_DEVICE_INIT;
    for (size_t k = 0; gpuprobe_gpus_mig_device(g, i, k, &m) == GPUPROBE_OK; k++)
        cli_push(migs, mig_json(&m));
    cli_set(o, "mig_devices", migs);
    if (gpu_int(g, i, GPUPROBE_GPU_PROCESSES) < 0) {
        cli_set_null(o, "processes");
        cli_set(o, "processes_error", cli_error_obj(gpuprobe_status_name(GPUPROBE_ERR_UNSUPPORTED),
                                                    gpuprobe_gpus_why(g, i, GPUPROBE_GPU_PROCESSES)));
        return o;
    }
    struct json_object *procs = cli_arr();
    gpuprobe_process p = GPUPROBE_PROCESS_INIT;
    for (size_t k = 0; gpuprobe_gpus_process(g, i, k, &p) == GPUPROBE_OK; k++)
        cli_push(procs, process_json(&p));
    cli_set(o, "processes", procs);
    cli_set_null(o, "processes_error");
    return o;
}

static void gpus_json(struct json_object *doc, const view *v)
{
    const char *driver = NULL;
    for (size_t i = 0; !driver && i < gpuprobe_gpus_count(v->g); i++)
        driver = gpu_str(v->g, i, GPUPROBE_GPU_DRIVER_VERSION);
    cli_set_str(doc, "driver_version", driver);
    if (!v->g) {
        cli_set_null(doc, "gpus");
        cli_set(doc, "gpus_error", cli_error_obj(gpuprobe_status_name(v->gpus_st),
                                                 v->message ? v->message : "out of memory"));
        return;
    }
    struct json_object *gpus = cli_arr();
    for (size_t i = 0; i < gpuprobe_gpus_count(v->g); i++)
        if (SHOWN(v, i))
            cli_push(gpus, gpu_json(v->g, i));
    cli_set(doc, "gpus", gpus);
    cli_set_null(doc, "gpus_error");
}

/* --bandwidth: one device's run (gpuprobe_bandwidth_run()), or its error. */
#define SMI_BW_TESTS 8
typedef struct bw_reading {
    gpuprobe_status st;
    char error[512];
    int64_t bytes;
    size_t n;
    const char *name[SMI_BW_TESTS];
    double best[SMI_BW_TESTS], median[SMI_BW_TESTS];
} bw_reading;

static void bw_measure(gpuprobe_context *ctx, size_t i, bw_reading *b)
{
    gpuprobe_bandwidth_options *o = NULL;
    gpuprobe_bandwidth_result *r = NULL;
    memset(b, 0, sizeof *b);
    b->st = gpuprobe_bandwidth_options_create(&o);
    if (b->st == GPUPROBE_OK && want.bytes)
        b->st = gpuprobe_bandwidth_options_set(o, GPUPROBE_BANDWIDTH_BUFFER_BYTES, (int64_t)want.bytes);
    if (b->st == GPUPROBE_OK)
        b->st = gpuprobe_bandwidth_run(ctx, i, o, 0, &r);
    gpuprobe_bandwidth_options_destroy(o);
    if (b->st != GPUPROBE_OK) {
        snprintf(b->error, sizeof b->error, "%s", gpuprobe_last_error(ctx));
        cli_report(ctx, b->st, "device %zu: measuring its bandwidth", i);
        return;
    }
    gpuprobe_bandwidth_result_get_int(r, GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES, &b->bytes);
    for (int t = 0; b->n < SMI_BW_TESTS; t++) {
        const char *name = gpuprobe_bandwidth_test_name((gpuprobe_bandwidth_test)t);
        if (strcmp(name, "unknown") == 0)
            break;
        if (gpuprobe_bandwidth_result_test(r, (gpuprobe_bandwidth_test)t, GPUPROBE_BANDWIDTH_BEST_GBPS,
                                           &b->best[b->n]) != GPUPROBE_OK)
            continue; /* not measured on this device */
        gpuprobe_bandwidth_result_test(r, (gpuprobe_bandwidth_test)t, GPUPROBE_BANDWIDTH_MEDIAN_GBPS,
                                       &b->median[b->n]);
        b->name[b->n++] = name;
    }
    gpuprobe_bandwidth_result_destroy(r);
}

/* The reading as JSON: each test's best and median GB/s, the buffer. */
static struct json_object *bw_json(const bw_reading *b)
{
    struct json_object *o = cli_obj();
    if (b->st != GPUPROBE_OK) {
        cli_set(o, "error", cli_error_obj(gpuprobe_status_name(b->st), b->error));
        return o;
    }
    cli_set_null(o, "error");
    cli_set_i64(o, "buffer_bytes", b->bytes);
    struct json_object *tests = cli_arr();
    for (size_t k = 0; k < b->n; k++) {
        struct json_object *one = cli_obj();
        cli_set_str(one, "test", b->name[k]);
        cli_set_num(one, "best_gbps", b->best[k]);
        cli_set_num(one, "median_gbps", b->median[k]);
        cli_push(tests, one);
    }
    cli_set(o, "tests", tests);
    return o;
}

/* --bandwidth in text: a line a device, after the tables. */
static void bw_text(gpuprobe_context *ctx, view *v)
{
    cli_endl();
    cli_line("Bandwidth (GB/s = 10^9 bytes/s, best pass; docs/bandwidth.md):");
    for (size_t i = 0; i < v->n; i++) {
        bw_reading b;
        bw_measure(ctx, i, &b);
        const char *spec = "?";
        gpuprobe_device_get_string(ctx, i, GPUPROBE_ATTR_SPEC, &spec);
        if (b.st != GPUPROBE_OK) {
            cli_line("  %-8s failed: %s", spec, gpuprobe_status_string(b.st));
            v->failed = 1;
            continue;
        }
        char buf[32];
        gp_format_bytes(buf, sizeof buf, (uint64_t)b.bytes);
        cli_put("  %-8s", spec);
        for (size_t k = 0; k < b.n; k++)
            cli_put("%s %s %.1f", k ? "," : "", b.name[k], b.best[k]);
        cli_line(" (buffers of %s)", buf);
    }
}

static int print_json(gpuprobe_context *ctx, view *v)
{
    struct json_object *doc = cli_doc();
    cli_probe_json(doc, &v->pr);
    gpus_json(doc, v);
    struct json_object *devices = cli_arr();
    for (size_t i = 0; i < v->n; i++) {
        gpuprobe_status st;
        struct json_object *d = cli_device_json(ctx, i, 1, &st);
        if (st != GPUPROBE_OK) {
            cli_report(ctx, st, "device %zu: reading its attributes", i);
            v->failed = 1;
        }
        if (int_or(ctx, i, GPUPROBE_ATTR_KIND) == GPUPROBE_DEVICE_CUDA)
            cli_set(d, "health", health_json(ctx, i));
        if (want.bandwidth) {
            bw_reading b;
            bw_measure(ctx, i, &b);
            v->failed |= b.st != GPUPROBE_OK;
            cli_set(d, "bandwidth", bw_json(&b));
        }
        const meminfo *m = &v->mem[i];
        if (m->st == GPUPROBE_OK) {
            cli_set(d, "memory", memory_json(&m->m));
            cli_set_null(d, "error");
        } else {
            cli_set_null(d, "memory");
            cli_set(d, "error", cli_error_obj(gpuprobe_status_name(m->st),
                                              m->error ? m->error : "out of memory"));
        }
        cli_push(devices, d);
    }
    cli_set(doc, "devices", devices);
    return cli_print_doc(doc);
}

/* ---- the refresh loop --------------------------------------------------------------------- */

static volatile sig_atomic_t stop; /* SIGINT or SIGTERM came */

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* SIGINT and SIGTERM end the loop between refreshes (a sleep they
 * interrupt ends at once); nothing is restarted, so a refresh's own calls
 * see the signal as they would without the handler. */
static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Sleep the interval, or until a signal. */
static void pause_loop(void)
{
    struct timespec left;
    left.tv_sec = (time_t)want.loop;
    left.tv_nsec = (long)((want.loop - (double)left.tv_sec) * 1e9);
    while (!stop && nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

/* One reading and its output. */
static int refresh(gpuprobe_context *ctx, unsigned long k)
{
    view v;
    int rc = view_read(ctx, &v);
    if (rc == CLI_EXIT_OK) {
        if (want.nfields && !v.g) {
            rc = cli_fail(ctx, GPUPROBE_ERR_UNSUPPORTED, "--query-gpu");
            cli_err("%s", v.why ? v.why : "the GPUs NVML knows cannot be read");
        } else if (want.nfields) {
            print_csv(&v, k);
        } else if (cli_json()) {
            rc = print_json(ctx, &v);
        } else {
            print_text(ctx, &v, k);
            if (want.bandwidth)
                bw_text(ctx, &v);
        }
    }
    if (rc == CLI_EXIT_OK && v.failed)
        rc = CLI_EXIT_FAIL;
    view_free(&v);
    return rc;
}

static int run(gpuprobe_context *ctx)
{
    if (want.help_query) {
        smi_fields_help();
        return CLI_EXIT_OK;
    }
    if (want.loop > 0)
        catch_signals();
    int worst = CLI_EXIT_OK;
    for (unsigned long k = 0;; k++) {
        int rc = refresh(ctx, k);
        if (rc == CLI_EXIT_USAGE)
            return rc;
        worst = rc > worst ? rc : worst;
        /* The output, now: a reader of a loop sees each refresh whole,
         * and a write error ends the loop (cli_finish() reports it). */
        if (cli_flush() != 0)
            break;
        if (want.loop == 0 || stop || (want.count && k + 1 >= want.count))
            break;
        pause_loop();
        if (stop)
            break;
    }
    return worst;
}

static const cli_command command = {
    "gpuprobe-smi",
    "List the GPUs as nvidia-smi does (every GPU NVML knows, with its CUDA\n"
    "number here, memory in MiB, health, MIG devices and processes) and the CPU,\n"
    "creating no CUDA context; say why CUDA is not usable when it is not.",
    options,
    "a query failed (the reason is on stderr)",
    "See gpuprobe-smi(1).",
    option,
    check,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
