/*
 * file.h - files the commands write: replaced atomically, links followed,
 * anything but a regular file refused. At the bottom of tools/common
 * (the C library only).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_FILE_H
#define GPUPROBE_CLI_FILE_H

#include <stddef.h>

/* Replace the file at path with the len bytes at data, atomically: they go
 * to a new hidden file beside it (".<name>.<8 hex digits>": readers of a
 * directory that skip dot files, such as Node Feature Discovery, never see
 * it), which gets the mode (whatever the umask), is flushed to disk (fsync)
 * and renamed over path; the directory is then synced (best effort).
 * Readers see the old file or the new one, never a part of either. A
 * symbolic link at path is followed (links to links too, relative ones
 * from the link's directory; a link to nothing makes the file it names),
 * and the file it leads to is replaced in its own directory: the link
 * stays. Anything there that is not a regular file (a device such as
 * /dev/null, a FIFO, a socket, a directory) is refused and left alone.
 * Returns 0, or -1 with why (why_size bytes) saying what failed and what
 * was left: "creating a temporary file beside it: Permission denied (the
 * old file, if any, is unchanged)", "it is a FIFO, not a regular file; it
 * was left as it is". The temporary file is then removed. */
int cli_replace_file(const char *path, const char *data, size_t len, unsigned mode, char *why,
                     size_t why_size);

#endif
