/*
 * start.h - the one start-up of the commands, at the top of tools/common:
 * the command line through the command's option handler, a context, the
 * work, the end. Every gpuprobe-* command's main() is
 *
 *     int main(int argc, char **argv) { return cli_main(&command, argc, argv); }
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_START_H
#define GPUPROBE_CLI_START_H

#include "args.h"

/* cli_start(); each option to cmd->option, then cmd->check (a usage error
 * ends the program with its status); a context ("creating a context" is
 * reported when that fails); cmd->run; the context destroyed; cli_finish().
 * Returns the exit status. */
int cli_main(const cli_command *cmd, int argc, char **argv);

#endif
