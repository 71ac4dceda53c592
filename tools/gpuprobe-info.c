/*
 * gpuprobe-info - is CUDA usable, which version, which GPU and how much
 * memory (the lesson's torch.cuda check), and why not when it is not. See
 * gpuprobe-info(1) and docs/json.md.
 *
 * Fast: no CUDA context is created (total memory comes from the driver,
 * free memory is never asked for), and neither cuBLAS nor OpenBLAS is
 * loaded.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

static const cli_option options[] = {
    {"json", NULL, "print one JSON object instead of text", 0},
    {NULL, NULL, NULL, 0},
};

static int print_json(const cli_probe *pr)
{
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(pr->ctx, &n);
    if (st != GPUPROBE_OK)
        return cli_fail(pr->ctx, st, "counting devices");
    struct json_object *doc = cli_doc();
    cli_probe_json(doc, pr);
    struct json_object *devices = cli_arr();
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct json_object *d = cli_device_json(pr->ctx, i, 0, &st);
        if (st != GPUPROBE_OK) {
            cli_report(pr->ctx, st, "device %zu: reading its attributes", i);
            failed = 1;
        }
        cli_push(devices, d);
    }
    cli_set(doc, "devices", devices);
    int rc = cli_print_doc(doc);
    return rc != CLI_EXIT_OK ? rc : failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* The lesson's lines (two when CUDA is not available, with the cause),
 * its GPU lines for every CUDA device, as its snippet would print them in a
 * loop over torch.cuda.device_count(). */
static int print_text(const cli_probe *pr)
{
    char v[32] = "None";
    if (pr->have_rt)
        gp_format_cuda_version(v, sizeof v, pr->rt);
    cli_line("CUDA available: %s", pr->cause == GPUPROBE_CUDA_AVAILABLE ? "True" : "False");
    cli_line("CUDA version: %s", v);
    if (pr->cause != GPUPROBE_CUDA_AVAILABLE) {
        cli_line("Reason: %s (%s)", gpuprobe_cuda_cause_string(pr->cause), pr->detail);
        return CLI_EXIT_OK;
    }
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(pr->ctx, &n);
    if (st != GPUPROBE_OK)
        return cli_fail(pr->ctx, st, "counting devices");
    cli_line("GPU count: %zu", n - 1);
    /* cuda:i is device i + 1 (device 0 is always the CPU). */
    for (size_t i = 1; i < n; i++) {
        const char *name = NULL;
        int64_t total = 0;
        st = gpuprobe_device_get_string(pr->ctx, i, GPUPROBE_ATTR_NAME, &name);
        if (st == GPUPROBE_OK)
            st = gpuprobe_device_get_int(pr->ctx, i, GPUPROBE_ATTR_TOTAL_MEMORY, &total);
        if (st != GPUPROBE_OK)
            return cli_fail(pr->ctx, st, "reading cuda:%zu", i - 1);
        cli_line("GPU %zu: %s", i - 1, name);
        cli_line("Memory: %.1f GB", (double)total / 1e9);
    }
    return CLI_EXIT_OK;
}

static int option(int opt, const char *value)
{
    (void)opt; /* --json is the only option, and cli_next() takes it */
    (void)value;
    return CLI_EXIT_OK;
}

static int run(gpuprobe_context *ctx)
{
    cli_probe pr;
    int rc = cli_probe_cuda(ctx, &pr);
    if (rc != CLI_EXIT_OK)
        return rc;
    return cli_json() ? print_json(&pr) : print_text(&pr);
}

static const cli_command command = {
    "gpuprobe-info",
    "Is CUDA usable, which version, which GPU and how much memory (the\n"
    "lesson's torch.cuda check); say why when CUDA is not usable.",
    options,
    "a query failed (the reason is on stderr)",
    "See gpuprobe-info(1).",
    option,
    NULL,
    run,
};

int main(int argc, char **argv)
{
    return cli_main(&command, argc, argv);
}
