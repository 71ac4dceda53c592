/*
 * figures.c - numbers written for people that only the commands write:
 * memory in MiB as nvidia-smi writes it, durations, the runs behind a
 * median (bytes and counts in decimal units are lib/format.c's).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void cli_mib(char *buf, size_t size, uint64_t bytes)
{
    snprintf(buf, size, "%lluMiB", (unsigned long long)(bytes >> 20));
}

void cli_seconds(char *buf, size_t size, double s)
{
    static const struct {
        double scale;
        const char *unit;
    } u[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "\xc2\xb5s"}, {1e-9, "ns"}};
    if (!(s > 0) || !isfinite(s)) {
        snprintf(buf, size, "%s", s > 0 ? "inf" : "0 s");
        return;
    }
    size_t i = 0;
    while (i + 1 < sizeof u / sizeof u[0] && s < u[i].scale)
        i++;
    for (;;) {
        double v = s / u[i].scale;
        int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2; /* three significant digits */
        char text[48];
        snprintf(text, sizeof text, "%.*f", decimals, v);
        if (i > 0 && strtod(text, NULL) >= 1000) { /* 999.7 us is 1.00 ms */
            i--;
            continue;
        }
        snprintf(buf, size, "%s %s", text, u[i].unit);
        return;
    }
}

void cli_runs(char *buf, size_t size, const gpuprobe_matmul_result *r)
{
    int64_t runs = 0, batch = 0;
    gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_RUNS, &runs);
    gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_BATCH, &batch);
    if (batch > 1)
        snprintf(buf, size, "median of %lld runs of %lld calls", (long long)runs,
                 (long long)batch);
    else
        snprintf(buf, size, "median of %lld run%s", (long long)runs, runs == 1 ? "" : "s");
}
