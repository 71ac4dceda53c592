/*
 * example_util.c - helpers shared by the example programs.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "example_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ex_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void ex_json_double(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

void ex_human_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1000.0 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
}

void ex_human_count(char *buf, size_t size, uint64_t count)
{
    static const char *const unit[] = {"", "K", "M", "B", "T", "Q"};
    double v = (double)count;
    size_t u = 0;
    while (v >= 1000.0 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu", (unsigned long long)count);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
}

int ex_parse_count(const char *text, uint64_t limit, uint64_t *out)
{
    if (!text || !*text)
        return -1;
    for (const char *p = text; *p; p++)
        if (!strchr("0123456789.eE+", *p))
            return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno || !end || *end || !(v >= 0) || v > (double)limit || v != floor(v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

void ex_report(const char *prog, const char *what, gpuprobe_context *ctx,
               gpuprobe_status st)
{
    const char *detail = gpuprobe_last_error(ctx);
    fprintf(stderr, "%s: %s: %s%s%s\n", prog, what, gpuprobe_status_string(st),
            detail[0] ? ": " : "", detail);
}

/* ---- device helpers (smi, cuda_info) ---- */

void ex_cuda_version(char *buf, size_t size, int version)
{
    if (version <= 0)
        snprintf(buf, size, "unknown");
    else
        snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
}

const char *ex_simd_name(int64_t simd)
{
    switch (simd) {
    case GPUPROBE_SIMD_NONE: return "none";
    case GPUPROBE_SIMD_SSE4_2: return "sse4_2";
    case GPUPROBE_SIMD_AVX: return "avx";
    case GPUPROBE_SIMD_AVX2_FMA: return "avx2_fma";
    case GPUPROBE_SIMD_AVX512: return "avx512";
    default: return "unknown";
    }
}

const char *ex_simd_label(int64_t simd)
{
    switch (simd) {
    case GPUPROBE_SIMD_NONE: return "baseline";
    case GPUPROBE_SIMD_SSE4_2: return "SSE4.2";
    case GPUPROBE_SIMD_AVX: return "AVX";
    case GPUPROBE_SIMD_AVX2_FMA: return "AVX2+FMA";
    case GPUPROBE_SIMD_AVX512: return "AVX-512";
    default: return "unknown";
    }
}

/* One integer member; null when unsupported. Keeps the first real error. */
static void json_int_member(FILE *out, gpuprobe_context *ctx, size_t index,
                            const char *key, gpuprobe_attr attr,
                            gpuprobe_status *first)
{
    int64_t v = 0;
    gpuprobe_status st = gpuprobe_device_get_int(ctx, index, attr, &v);
    fprintf(out, ", \"%s\": ", key);
    if (st == GPUPROBE_OK)
        fprintf(out, "%lld", (long long)v);
    else
        fputs("null", out);
    if (st != GPUPROBE_OK && st != GPUPROBE_ERR_UNSUPPORTED && *first == GPUPROBE_OK)
        *first = st;
}

static void json_str_member(FILE *out, gpuprobe_context *ctx, size_t index,
                            const char *key, gpuprobe_attr attr,
                            gpuprobe_status *first)
{
    const char *s = NULL;
    gpuprobe_status st = gpuprobe_device_get_string(ctx, index, attr, &s);
    fprintf(out, ", \"%s\": ", key);
    if (st == GPUPROBE_OK)
        ex_json_string(out, s);
    else
        fputs("null", out);
    if (st != GPUPROBE_OK && st != GPUPROBE_ERR_UNSUPPORTED && *first == GPUPROBE_OK)
        *first = st;
}

gpuprobe_status ex_json_device_members(FILE *out, gpuprobe_context *ctx,
                                       size_t index, int verbose)
{
    gpuprobe_status first = GPUPROBE_OK;
    int64_t kind = -1;
    gpuprobe_status st = gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_KIND, &kind);
    if (st != GPUPROBE_OK)
        return st;
    fprintf(out, "\"index\": %zu", index);
    json_str_member(out, ctx, index, "spec", GPUPROBE_ATTR_SPEC, &first);
    fprintf(out, ", \"kind\": \"%s\"", kind == GPUPROBE_DEVICE_CUDA ? "cuda" : "cpu");
    json_str_member(out, ctx, index, "name", GPUPROBE_ATTR_NAME, &first);
    json_int_member(out, ctx, index, "total_memory_bytes", GPUPROBE_ATTR_TOTAL_MEMORY, &first);
    if (kind == GPUPROBE_DEVICE_CUDA) {
        int64_t ma = -1, mi = -1;
        json_int_member(out, ctx, index, "cuda_index", GPUPROBE_ATTR_CUDA_INDEX, &first);
        json_str_member(out, ctx, index, "uuid", GPUPROBE_ATTR_UUID, &first);
        json_str_member(out, ctx, index, "pci_bus_id", GPUPROBE_ATTR_PCI_BUS_ID, &first);
        if (gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_CC_MAJOR, &ma) == GPUPROBE_OK &&
            gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_CC_MINOR, &mi) == GPUPROBE_OK)
            fprintf(out, ", \"compute_capability\": \"%lld.%lld\"", (long long)ma,
                    (long long)mi);
        else
            fputs(", \"compute_capability\": null", out);
        json_int_member(out, ctx, index, "cc_major", GPUPROBE_ATTR_CC_MAJOR, &first);
        json_int_member(out, ctx, index, "cc_minor", GPUPROBE_ATTR_CC_MINOR, &first);
        json_int_member(out, ctx, index, "multiprocessors", GPUPROBE_ATTR_MULTIPROCESSORS, &first);
        json_int_member(out, ctx, index, "clock_khz", GPUPROBE_ATTR_CLOCK_KHZ, &first);
        json_int_member(out, ctx, index, "memory_clock_khz", GPUPROBE_ATTR_MEMORY_CLOCK_KHZ, &first);
        json_int_member(out, ctx, index, "memory_bus_bits", GPUPROBE_ATTR_MEMORY_BUS_BITS, &first);
    } else {
        int64_t simd = -1;
        json_int_member(out, ctx, index, "logical_cores", GPUPROBE_ATTR_LOGICAL_CORES, &first);
        st = gpuprobe_device_get_int(ctx, index, GPUPROBE_ATTR_SIMD, &simd);
        fputs(", \"simd\": ", out);
        if (st == GPUPROBE_OK)
            ex_json_string(out, ex_simd_name(simd));
        else
            fputs("null", out);
        json_int_member(out, ctx, index, "clock_khz", GPUPROBE_ATTR_CLOCK_KHZ, &first);
        if (verbose) { /* the BLAS attributes load OpenBLAS (~3 ms) */
            json_str_member(out, ctx, index, "blas_core", GPUPROBE_ATTR_BLAS_CORE, &first);
            json_int_member(out, ctx, index, "blas_threads", GPUPROBE_ATTR_BLAS_THREADS, &first);
            json_str_member(out, ctx, index, "blas_config", GPUPROBE_ATTR_BLAS_CONFIG, &first);
        }
    }
    return first;
}

int ex_cuda_probe_start(int argc, char **argv, const char *prog,
                        void (*usage)(FILE *), int *json, ex_cuda_probe *probe)
{
    *json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            *json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return EX_OK;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", prog, argv[i]);
            usage(stderr);
            return EX_USAGE;
        }
    }
    memset(probe, 0, sizeof *probe);
    probe->detail = "";
    gpuprobe_status st = gpuprobe_context_create(&probe->ctx, 0);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "creating a context", NULL, st);
        return EX_FAIL;
    }
    st = gpuprobe_cuda_status(probe->ctx, &probe->cause, &probe->detail);
    if (st != GPUPROBE_OK) {
        ex_report(prog, "asking for CUDA", probe->ctx, st);
        gpuprobe_context_destroy(probe->ctx);
        probe->ctx = NULL;
        return EX_FAIL;
    }
    probe->have_rt = gpuprobe_cuda_runtime_version(probe->ctx, &probe->rt) == GPUPROBE_OK;
    probe->have_drv = gpuprobe_cuda_driver_version(probe->ctx, &probe->drv) == GPUPROBE_OK;
    return -1;
}

static void json_version(FILE *out, int have, int version)
{
    if (have) {
        char v[32];
        ex_cuda_version(v, sizeof v, version);
        ex_json_string(out, v);
    } else {
        fputs("null", out);
    }
}

void ex_json_cuda_members(FILE *out, const ex_cuda_probe *pr)
{
    fprintf(out, "\"cuda_available\": %s, \"reason\": ",
            pr->cause == GPUPROBE_CUDA_AVAILABLE ? "true" : "false");
    ex_json_string(out, gpuprobe_cuda_cause_name(pr->cause));
    fputs(", \"detail\": ", out);
    ex_json_string(out, pr->detail);
    fputs(", \"cuda_runtime_version\": ", out);
    json_version(out, pr->have_rt, pr->rt);
    fputs(", \"cuda_driver_version\": ", out);
    json_version(out, pr->have_drv, pr->drv);
}
