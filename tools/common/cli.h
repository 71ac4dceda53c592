/*
 * cli.h - what the gpuprobe commands (tools/) and the lesson's example
 * programs (examples/) share: the command line, text output under one
 * quoting rule, JSON output through json-c, error reports, exit statuses
 * and write-error detection. Not part of the library, which never prints:
 * a small static library linked into the programs.
 *
 * It is built in layers, each calling only those below it (the table in
 * docs/commands.md, checked by arch.layers):
 *
 *   start.h    cli_main(): options, a context, the work, the end
 *   plot.h     a chart drawn into a PNG, SVG or PDF file (cairo)
 *   roofline.h a roofline onto a chart, as a table, as JSON
 *   chart.h    a chart to fill: axes, series, levels, labels, legend
 *   probe.h    the CUDA answer, a device as JSON
 *   model.h    a model named on the command line: its config.json found
 *              (path, hub cache, shipped) and read; the workload options
 *   args.h     the command, the option grammar, --help, --version
 *   report.h   failed calls and usage errors (stderr, JSON error document)
 *   json.h     JSON documents and --json
 *   text.h     program name, quoting, lines, stderr, the end
 *   figures.h, values.h, file.h, axis.h   numbers for people, values
 *              parsed, files replaced, axis ticks (beside text.h)
 *
 * Exit statuses, the same in every program (docs/json.md, the man pages):
 *   0  success: the question was answered
 *   1  the answer is "no" (nothing meets a stated requirement) or a query
 *      failed (the output says which and why), or the output could not be
 *      written
 *   2  usage error: a bad option or value on the command line
 *
 * Text output: every line goes through cli_quote(), so nothing that comes
 * from the system (a device name, a library message, a path echoed back by
 * the dynamic loader) reaches a terminal as raw control bytes or invalid
 * UTF-8. JSON output: every string is valid UTF-8 (invalid bytes become
 * U+FFFD) and escaped by json-c.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_H
#define GPUPROBE_CLI_H

#include "gpuprobe.h"

#include "args.h"
#include "axis.h"
#include "chart.h"
#include "figures.h"
#include "file.h"
#include "json.h"
#include "model.h"
#include "plot.h"
#include "probe.h"
#include "progress.h"
#include "report.h"
#include "roofline.h"
#include "start.h"
#include "text.h"
#include "values.h"

#endif
