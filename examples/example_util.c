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
