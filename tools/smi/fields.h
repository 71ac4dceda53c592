/*
 * fields.h - gpuprobe-smi's --query-gpu: the fields it takes (nvidia-smi's
 * names for the facts libgpuprobe reads), their CSV headers and values,
 * written as nvidia-smi writes them ("143771 MiB", "35 %", "[N/A]").
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_SMI_FIELDS_H
#define GPUPROBE_SMI_FIELDS_H

#include <stddef.h>
#include <time.h>

#include "gpuprobe.h"

typedef struct smi_field smi_field;

/* The most fields one --query-gpu may name. */
#define SMI_MAX_FIELDS 64

/* "index,name,memory.total" (blanks around a name allowed) into out[],
 * *n fields: 0; -1 when a name is unknown or empty (*bad holds it), or
 * there are more than max. */
int smi_fields_parse(const char *text, const smi_field **out, size_t max, size_t *n,
                     char *bad, size_t bad_size);

/* The header of a field's column: "memory.total [MiB]", "index". */
const char *smi_field_header(const smi_field *f, char *buf, size_t size);

/* The value of a field for GPU gpu of the snapshot (now: the refresh's
 * time, for "timestamp"): "143771 MiB", or "143771" without units;
 * "[N/A]" when the library could not read it. */
void smi_field_value(const smi_field *f, const gpuprobe_gpus *g, size_t gpu,
                     const struct timespec *now, int units, char *buf, size_t size);

/* Each field, one a line: its names and what it is (--help-query-gpu). */
void smi_fields_help(void);

#endif
