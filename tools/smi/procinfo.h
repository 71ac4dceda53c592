/*
 * procinfo.h - who a process on a GPU is: its user and command line, read
 * from /proc, for gpuprobe-smi's process table. NVML gives process IDs of
 * the host's PID namespace; inside a container a process of another
 * container has no /proc entry here.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_SMI_PROCINFO_H
#define GPUPROBE_SMI_PROCINFO_H

#include <stddef.h>

/* The user (name, or the number when the system has no name for it) and
 * the command line (its arguments joined by blanks; "[comm]" for a
 * process without one, as ps writes kernel threads; "?" when it cannot
 * be read) of process pid, from /proc. 1 when /proc has the process; 0
 * when not (another PID namespace, or it ended): user and command "-". */
int smi_process_info(unsigned pid, char *user, size_t user_size, char *cmd, size_t cmd_size);

#endif
