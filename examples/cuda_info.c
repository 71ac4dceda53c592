/*
 * cuda_info.c - the lesson's PyTorch check, line for line:
 *
 *     print(f"CUDA available: {torch.cuda.is_available()}")
 *     print(f"CUDA version: {torch.version.cuda}")
 *     if torch.cuda.is_available():
 *         print(f"GPU: {torch.cuda.get_device_name(0)}")
 *         print(f"Memory: {torch.cuda.get_device_properties(0).total_memory / 1e9:.1f} GB")
 *
 * and, when CUDA is not available, one more line saying why:
 *
 *     Reason: <cause> (<detail>)
 *
 * "CUDA version" is the version of the CUDA runtime library that was
 * actually loaded (None when none could be), not the one a wheel was built
 * for. The program is fast (no CUDA context is created: total memory comes
 * from the driver, free memory is never asked for) and exits 0 whether or
 * not CUDA is available.
 *
 * Usage: cuda_info [--json] [--help]
 *
 * With --json it prints exactly one JSON object:
 *
 *   cuda_available        bool: at least one CUDA device is usable.
 *   reason                string: the cause token, gpuprobe_cuda_cause_name()
 *                         ("available", "no_driver", "no_runtime",
 *                         "driver_too_old", "devices_hidden", ...).
 *   detail                string: one-line explanation (versions, the CUDA
 *                         error name, what was tried).
 *   cuda_runtime_version  string "13.0", or null when no runtime was loaded.
 *   cuda_driver_version   string "12.4" (the CUDA version the driver
 *                         supports), or null when no driver was loaded.
 *   devices               array, device 0 (the CPU) first, then cuda:0, ...
 *                         Every entry: index, spec ("cpu", "cuda:N"), kind
 *                         ("cpu" or "cuda"), name, total_memory_bytes.
 *                         CUDA entries add cuda_index, uuid, pci_bus_id,
 *                         compute_capability ("9.0"), cc_major, cc_minor,
 *                         multiprocessors, clock_khz, memory_clock_khz,
 *                         memory_bus_bits. The CPU entry adds logical_cores,
 *                         simd ("none", "sse4_2", "avx", "avx2_fma",
 *                         "avx512"), clock_khz (the BLAS attributes are
 *                         smi's: asking for them loads OpenBLAS).
 *                         Values the system does not know are null.
 *
 * Exit status: 0 success (CUDA available or not), 1 a library call failed,
 * 2 bad command line.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "example_util.h"

#include <stdio.h>
#include <string.h>

static const char *prog = "cuda_info";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s [--json] [--help]\n"
            "Is CUDA usable, which version, which GPU and how much memory\n"
            "(the lesson's torch.cuda check); says why when CUDA is not usable.\n",
            prog);
}

static int print_json(const ex_cuda_probe *pr)
{
    size_t n = 0;
    gpuprobe_status st = gpuprobe_device_count(pr->ctx, &n);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "counting devices", pr->ctx, st);
        return EX_FAIL;
    }
    fputc('{', stdout);
    ex_json_cuda_members(stdout, pr);
    fputs(", \"devices\": [", stdout);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {" : "{", stdout);
        st = ex_json_device_members(stdout, pr->ctx, i, 0);
        fputs("}", stdout);
        if (st != GPUPROBE_OK) {
            fputs("]}\n", stdout);
            ex_report(prog, "reading device attributes", pr->ctx, st);
            return EX_FAIL;
        }
    }
    fputs("]}\n", stdout);
    return EX_OK;
}

/* The lesson's four lines (two when CUDA is not available), plus the cause. */
static int print_text(const ex_cuda_probe *pr)
{
    char v[32] = "None";
    if (pr->have_rt)
        ex_cuda_version(v, sizeof v, pr->rt);
    printf("CUDA available: %s\n", pr->cause == GPUPROBE_CUDA_AVAILABLE ? "True" : "False");
    printf("CUDA version: %s\n", v);
    if (pr->cause != GPUPROBE_CUDA_AVAILABLE) {
        printf("Reason: %s (%s)\n", gpuprobe_cuda_cause_string(pr->cause), pr->detail);
        return EX_OK;
    }
    /* cuda:0 is device 1 (device 0 is always the CPU). */
    const char *name = NULL;
    int64_t total = 0;
    gpuprobe_status st = gpuprobe_device_get_string(pr->ctx, 1, GPUPROBE_ATTR_NAME, &name);
    if (st == GPUPROBE_OK)
        st = gpuprobe_device_get_int(pr->ctx, 1, GPUPROBE_ATTR_TOTAL_MEMORY, &total);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "reading cuda:0", pr->ctx, st);
        return EX_FAIL;
    }
    printf("GPU: %s\n", name);
    printf("Memory: %.1f GB\n", (double)total / 1e9);
    return EX_OK;
}

int main(int argc, char **argv)
{
    int json;
    ex_cuda_probe pr;
    int exit_now = ex_cuda_probe_start(argc, argv, prog, usage, &json, &pr);
    if (exit_now >= 0)
        return exit_now;
    int rc = json ? print_json(&pr) : print_text(&pr);
    gpuprobe_context_destroy(pr.ctx);
    return rc;
}
