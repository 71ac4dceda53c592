/*
 * roofline.h - a roofline: the throughput each device can attain at each
 * arithmetic intensity (FLOP per byte moved to or from memory), bounded
 * by its measured memory read rate (a slope) and by its measured
 * throughput in each precision (a flat roof each), the theoretical peaks
 * dashed beside them; the sizes of a matmul sweep as points on it, and
 * labelled operating points a command adds (a model's prefill and
 * decode). Drawn onto a chart (chart.h), printed as a table, written as
 * JSON. Above chart.h and json.h; the commands fill the structures (their
 * arrays stay theirs) and call these.
 *
 *     cli_roof_device cpu = {"cpu", "Intel Xeon", 12.9, 0, roofs, 1};
 *     cli_roofline r = {&cpu, 1, NULL, 0};
 *     cli_roofline_draw(chart, &r);       axes, lines, points, keys
 *     cli_roofline_print(&r);             the table
 *     cli_set(doc, "roofline", cli_roofline_json(&r));
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_ROOFLINE_H
#define GPUPROBE_CLI_ROOFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "chart.h"

struct json_object;

/* A measured point: n x n times n x n, 2 n^3 FLOP over bytes. */
typedef struct cli_roof_point {
    int64_t n;
    double bytes;  /* the least traffic: cli_roof_matmul_bytes() */
    double gflops; /* measured */
} cli_roof_point;

/* One precision of a device. */
typedef struct cli_roof {
    const char *dtype;          /* "fp32" */
    double gflops;              /* the measured roof (the best point); 0: none */
    int64_t n;                  /* the size that reached it */
    double peak_gflops;         /* theoretical; 0: unknown */
    const cli_roof_point *points;
    size_t npoints;
} cli_roof;

typedef struct cli_roof_device {
    const char *spec, *name;    /* "cuda:0", "NVIDIA H200" */
    double read_gbps;           /* measured read rate, GB/s; 0: not measured */
    double peak_gbps;           /* the memory's theoretical rate; 0: unknown */
    const cli_roof *roofs;
    size_t nroofs;
} cli_roof_device;

/* An operating point another command places on the roofline (drawn as a
 * ring with its label; not in the table or the JSON, which are that
 * command's). */
typedef struct cli_roof_extra {
    size_t device;              /* its device, an index into devices */
    double intensity, gflops;   /* FLOP/byte; attained or predicted GFLOP/s */
    const char *label;          /* "decode, batch 1: 310 GFLOP/s" */
} cli_roof_extra;

typedef struct cli_roofline {
    const cli_roof_device *devices;
    size_t ndevices;
    const cli_roof_extra *extra;
    size_t nextra;
} cli_roofline;

/* The least memory traffic of an n x n x n matmul, in bytes: A and B read
 * once (in_bytes an element), C written once (out_bytes an element). */
double cli_roof_matmul_bytes(int64_t n, size_t in_bytes, size_t out_bytes);

/* The ridge: the intensity gflops / gbps (FLOP/byte) where the slope meets
 * the roof; 0 when either is not above 0. */
double cli_roof_ridge(double gflops, double gbps);

/* What the roof allows at intensity: min(gflops, gbps x intensity), or
 * gflops without a slope (gbps 0). */
double cli_roof_attainable(double gflops, double gbps, double intensity);

/* The roofline onto c: both axes (log-log); a panel per device (the first
 * CLI_CHART_MAX_PANELS that have a measured roof; the others are left
 * out) with the slope of its measured read rate and a flat roof per
 * precision measured, the peaks dashed (a dashed slope where the memory's
 * peak is known), the points labelled by n, its extra points; a colour
 * and a mark per precision; legend keys. The title and the footer are the
 * caller's. */
void cli_roofline_draw(cli_chart *c, const cli_roofline *r);

/* The devices, their roofs, ridges and points as a JSON array (the
 * members docs/json.md lists under roofline.devices). */
struct json_object *cli_roofline_json(const cli_roofline *r);

/* The same as a table on standard output. */
void cli_roofline_print(const cli_roofline *r);

#endif
