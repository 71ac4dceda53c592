/*
 * gpuprobe-nfd - node labels for Kubernetes: writes a feature file for the
 * local source of Node Feature Discovery (NFD), which turns each
 * "name=value" line into a label of the node. What GPU feature discovery
 * does not say: whether CUDA is usable here and why not, and (--bench)
 * measured matmul throughput per precision and the largest model that
 * fits. See gpuprobe-nfd(1), docs/kubernetes.md and docs/json.md.
 *
 * The file is replaced atomically (a hidden temporary file beside it,
 * flushed and renamed), so NFD never reads half of one, and a failure
 * leaves the old file as it was.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"
#include "nfd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NFD_DEFAULT_OUTPUT "/etc/kubernetes/node-feature-discovery/features.d/gpuprobe"

enum { OPT_OUTPUT, OPT_PREFIX, OPT_EXPIRY, OPT_BENCH, OPT_BENCH_ONLY, OPT_SIZE, OPT_JSON };

static const cli_option options[] = {
    [OPT_OUTPUT] = {"output", "FILE", "where to write the feature file; - for standard output"},
    [OPT_PREFIX] = {"prefix", "DOMAIN", "label prefix, a DNS subdomain (default " NFD_DEFAULT_PREFIX ")"},
    [OPT_EXPIRY] = {"expiry", "TIME", "labels lapse TIME from now unless rewritten (3600, 90m, 2h, 7d)"},
    [OPT_BENCH] = {"bench", NULL, "also measure: matmul TFLOP/s per precision, largest model (runs work)"},
    [OPT_BENCH_ONLY] = {"bench-only", NULL, "write only the measured labels (implies --bench)"},
    [OPT_SIZE] = {"size", "N", "with --bench: multiply N x N matrices (default 5000)"},
    [OPT_JSON] = {"json", NULL, "print one JSON object with the labels instead of text"},
    {NULL, NULL, NULL},
};

static struct {
    const char *output;
    const char *prefix;
    long long expiry_s; /* 0: no expiry directive */
    int bench, bench_only;
    int64_t size;
} args = {NFD_DEFAULT_OUTPUT, NFD_DEFAULT_PREFIX, 0, 0, 0, 0};

/* Every failure reported, for the "errors" of the JSON document (the
 * first ones: there are a few at most; all of them go to stderr). */
static struct {
    const char *status;
    char message[1024];
} errs[32];
static size_t n_errs;

static void add_error(const char *status, const char *message)
{
    if (n_errs < sizeof errs / sizeof errs[0]) {
        errs[n_errs].status = status;
        snprintf(errs[n_errs].message, sizeof errs[n_errs].message, "%s", message);
        n_errs++;
    }
}

/* nfd_gather()'s report of a failed query: on stderr, and in "errors". */
static void report(void *arg, gpuprobe_context *ctx, gpuprobe_status st, const char *what)
{
    (void)arg;
    char *msg = cli_status_text(ctx, st, "%s", what);
    cli_err("%s", msg ? msg : what);
    add_error(gpuprobe_status_name(st), msg ? msg : what);
    free(msg);
}

/* "3600", "90m", "2h", "7d": at most ten years. */
static int parse_duration(const char *text, long long *seconds)
{
    static const struct {
        char unit;
        long long scale;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
    char *end = NULL;
    if (!text || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    long long scale = 1;
    if (errno)
        return -1;
    if (*end) {
        size_t i = 0;
        while (i < sizeof units / sizeof units[0] && units[i].unit != *end)
            i++;
        if (i == sizeof units / sizeof units[0] || end[1])
            return -1;
        scale = units[i].scale;
    }
    if (v == 0 || v > 3660ull * 86400 / (unsigned long long)scale)
        return -1;
    *seconds = (long long)v * scale;
    return 0;
}

/* Kubernetes keeps these for its own components; NFD refuses
 * kubernetes.io and its subdomains. */
static int reserved_prefix(const char *p)
{
    static const char *const reserved[] = {"kubernetes.io", "k8s.io"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        size_t n = strlen(p), r = strlen(reserved[i]);
        if (strcmp(p, reserved[i]) == 0 ||
            (n > r && p[n - r - 1] == '.' && strcmp(p + n - r, reserved[i]) == 0))
            return 1;
    }
    return 0;
}

static int size_given;

static int option(int opt, const char *v)
{
    switch (opt) {
    case OPT_OUTPUT:
        if (!*v)
            return cli_usage_error("--output wants a file name, or - for standard output");
        args.output = v;
        break;
    case OPT_PREFIX: {
        const char *why = label_prefix_error(v);
        if (why || reserved_prefix(v))
            return cli_bad_value(v, "--prefix wants a DNS subdomain (%s)",
                                 why ? why : "kubernetes.io and k8s.io are reserved for Kubernetes");
        args.prefix = v;
        break;
    }
    case OPT_EXPIRY:
        if (parse_duration(v, &args.expiry_s) != 0)
            return cli_bad_value(v, "--expiry wants a time from 1 second to 3660 days: a number "
                                    "of seconds, or with s, m, h or d (90m)");
        break;
    case OPT_BENCH_ONLY:
        args.bench_only = 1;
        /* fall through */
    case OPT_BENCH:
        args.bench = 1;
        break;
    case OPT_SIZE: {
        int64_t lo = 1, hi = INT32_MAX;
        uint64_t n = 0;
        gpuprobe_matmul_param_bounds(GPUPROBE_MATMUL_M, &lo, &hi);
        if (cli_parse_count(v, (uint64_t)hi, &n) != 0 || n < (uint64_t)(lo < 1 ? 1 : lo))
            return cli_bad_value(v, "--size wants a whole number from %lld to %lld",
                                 (long long)(lo < 1 ? 1 : lo), (long long)hi);
        args.size = (int64_t)n;
        size_given = 1;
        break;
    }
    }
    return CLI_EXIT_OK;
}

static int check(void)
{
    if (size_given && !args.bench)
        return cli_usage_error("--size goes with --bench or --bench-only");
    return CLI_EXIT_OK;
}

/* Keep only labels that pass the Kubernetes rules; one that does not is a
 * bug here, reported and left out rather than refused by NFD. */
static size_t checked(nfd_label *labels, size_t n, int *failed)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const char *why = label_key_error(labels[i].key);
        if (!why)
            why = label_value_error(labels[i].value);
        if (why) {
            char msg[640];
            snprintf(msg, sizeof msg, "internal error: label %.320s=%.64s left out: %.200s",
                     labels[i].key, labels[i].value, why);
            cli_err("%s", msg);
            add_error("internal", msg);
            *failed = 1;
            continue;
        }
        labels[kept++] = labels[i];
    }
    return kept;
}

static int print_json(const nfd_label *labels, size_t n, int to_file, const char *expiry)
{
    struct json_object *doc = cli_doc();
    if (to_file)
        cli_set_str(doc, "output", args.output);
    else
        cli_set_null(doc, "output");
    if (expiry)
        cli_set_str(doc, "expiry_time", expiry);
    else
        cli_set_null(doc, "expiry_time");
    struct json_object *o = cli_obj();
    for (size_t i = 0; i < n; i++)
        cli_set_str(o, labels[i].key, labels[i].value);
    cli_set(doc, "labels", o);
    struct json_object *e = cli_arr();
    for (size_t i = 0; i < n_errs; i++)
        cli_push(e, cli_error_obj(errs[i].status, errs[i].message));
    cli_set(doc, "errors", e);
    return cli_print_doc(doc);
}

/* The labels of this node, checked; *failed when a query failed. */
static gpuprobe_status gather(gpuprobe_context *ctx, nfd_label *labels, size_t *n, int *failed)
{
    nfd_options opt = {args.bench, args.size};
    nfd_facts facts;
    gpuprobe_status st = nfd_gather(ctx, &opt, &facts, report, NULL);
    if (st != GPUPROBE_OK) {
        /* Nothing to label: the old file stays. In JSON, the error
         * document (the message was on stderr already). */
        if (cli_json()) {
            struct json_object *doc = cli_doc();
            cli_set(doc, "error", cli_error_obj(gpuprobe_status_name(st),
                                                n_errs ? errs[n_errs - 1].message : "the probe failed"));
            cli_print_doc(doc);
        }
        nfd_facts_free(&facts);
        return st;
    }
    *failed = facts.failures > 0;
    unsigned which = args.bench_only ? NFD_MEASURED : NFD_PROBE | NFD_MEASURED;
    *n = checked(labels, nfd_labels(&facts, args.prefix, which, labels), failed);
    nfd_facts_free(&facts);
    return GPUPROBE_OK;
}

static int run(gpuprobe_context *ctx)
{
    nfd_label labels[NFD_MAX_LABELS];
    size_t n = 0;
    int failed = 0;
    if (gather(ctx, labels, &n, &failed) != GPUPROBE_OK)
        return CLI_EXIT_FAIL;

    char expiry[21];
    if (args.expiry_s && nfd_rfc3339(time(NULL) + (time_t)args.expiry_s, expiry) != 0) {
        cli_err("cannot write the expiry time: the clock says a year beyond 9999");
        return CLI_EXIT_FAIL;
    }
    size_t len = 0;
    char *text = nfd_file_text(labels, n, args.expiry_s ? expiry : NULL, &len);
    if (!text)
        return cli_fail(NULL, GPUPROBE_ERR_OUT_OF_MEMORY, "writing the labels");
    int to_file = strcmp(args.output, "-") != 0;
    if (to_file) {
        char why[768], msg[1024];
        if (cli_replace_file(args.output, text, len, 0644, why, sizeof why) != 0) {
            snprintf(msg, sizeof msg, "cannot write %.200s: %s", args.output, why);
            cli_err("%s", msg);
            add_error("system", msg);
            failed = 1;
        }
    } else if (!cli_json()) {
        fwrite(text, 1, len, stdout);
    }
    free(text);
    int rc = CLI_EXIT_OK;
    if (cli_json())
        rc = print_json(labels, n, to_file, args.expiry_s ? expiry : NULL);
    return rc != CLI_EXIT_OK ? rc : failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static const cli_command command = {
    "gpuprobe-nfd",
    "Write node labels for Kubernetes Node Feature Discovery (its local feature\n"
    "file): is CUDA usable and why not, versions, the GPU product, count,\n"
    "compute capability and memory; with --bench, measured TFLOP/s and the\n"
    "largest model that fits. FILE defaults to\n" NFD_DEFAULT_OUTPUT ".",
    options,
    "a query failed (its labels are left out), or the file could not be written",
    "See gpuprobe-nfd(1) and the labels in docs/kubernetes.md.",
    option,
    check,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
