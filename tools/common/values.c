/*
 * values.c - the values the commands parse: counts (e-notation too),
 * compute capabilities, workloads.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "values.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_parse_count(const char *text, uint64_t limit, uint64_t *out)
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
    /* (double)limit may round up past limit: compare as integers too. */
    if (v >= 18446744073709551616.0 || (uint64_t)v > limit)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_range(const char *text, uint64_t limit, uint64_t *from, uint64_t *to)
{
    const char *dots = text ? strstr(text, "..") : NULL;
    char first[64];
    size_t n = dots ? (size_t)(dots - text) : 0;
    if (n == 0 || n >= sizeof first)
        return -1;
    memcpy(first, text, n);
    first[n] = '\0';
    uint64_t lo = 0, hi = 0;
    if (cli_parse_count(first, limit, &lo) != 0 || cli_parse_count(dots + 2, limit, &hi) != 0 || lo > hi)
        return -1;
    *from = lo;
    *to = hi;
    return 0;
}

int cli_parse_size(const char *text, uint64_t limit, uint64_t *out)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {
        {"", 1}, {"b", 1}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"pb", 1e15},
        {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0},
        {"tib", 1099511627776.0}, {"pib", 1125899906842624.0},
    };
    if (!text)
        return -1;
    size_t digits = strspn(text, "0123456789.eE+");
    /* "2e" would leave "e" to the number and nothing to the unit; a unit
     * never starts with e, so give the letters after the last digit back. */
    while (digits > 0 && (text[digits - 1] == 'e' || text[digits - 1] == 'E'))
        digits--;
    char number[64];
    if (digits == 0 || digits >= sizeof number)
        return -1;
    memcpy(number, text, digits);
    number[digits] = '\0';
    const char *unit = text + digits;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(unit, units[i].unit) != 0)
            continue;
        errno = 0;
        char *end = NULL;
        double v = strtod(number, &end) * units[i].scale;
        if (errno || !end || *end || !(v >= 0) || v != floor(v) || v > (double)limit ||
            v >= 18446744073709551616.0 || (uint64_t)v > limit)
            return -1;
        *out = (uint64_t)v;
        return 0;
    }
    return -1;
}

int cli_parse_cc(const char *text, int *major, int *minor)
{
    if (!text || *text < '0' || *text > '9')
        return -1;
    char *end = NULL;
    long a = strtol(text, &end, 10), b = 0;
    if (*end == '.') {
        const char *m = end + 1;
        if (*m < '0' || *m > '9')
            return -1;
        b = strtol(m, &end, 10);
    }
    if (*end != '\0' || a > 1000 || b > 1000)
        return -1;
    *major = (int)a;
    *minor = (int)b;
    return 0;
}

int cli_parse_workload(const char *text, gpuprobe_workload *out)
{
    static const gpuprobe_workload all[] = {GPUPROBE_WORKLOAD_WEIGHTS,
                                            GPUPROBE_WORKLOAD_INFERENCE,
                                            GPUPROBE_WORKLOAD_TRAINING};
    for (size_t i = 0; text && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, gpuprobe_workload_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

int cli_have_rule(gpuprobe_dtype dtype, gpuprobe_workload workload)
{
    uint64_t bytes = 0;
    return gpuprobe_capacity_bytes(1, dtype, workload, &bytes) == GPUPROBE_OK;
}
