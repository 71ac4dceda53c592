/*
 * file.c - replace a file atomically: readers see the old file or the new
 * one, never a part of either, and a failure leaves the old one as it was.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* write() until done: short writes continue, EINTR retries. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A new hidden file in dir (dir_len bytes of path; 0: the working
 * directory) beside base: "<dir>/.<base>.<8 hex digits>", created
 * exclusively. Returns its descriptor, or -1 with errno set. */
static int create_temp(const char *path, size_t dir_len, const char *base, mode_t mode,
                       char **tmp)
{
    size_t size = dir_len + strlen(base) + 16;
    *tmp = malloc(size);
    if (!*tmp)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    for (int attempt = 0; attempt < 100; attempt++) {
        seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        snprintf(*tmp, size, "%.*s.%s.%08lx", (int)dir_len, path, base,
                 (unsigned long)(seed >> 32));
        int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

int cli_replace_file(const char *path, const char *data, size_t len, unsigned mode,
                     const char **step)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    char *tmp = NULL;
    if (!*base) {
        *step = "naming the file";
        errno = EISDIR;
        return -1;
    }
    *step = "creating a temporary file beside it";
    int fd = create_temp(path, dir_len, base, (mode_t)mode, &tmp);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        errno = err;
        return -1;
    }
    /* The mode asked for, whatever the umask. */
    int rc = -1;
    if (fchmod(fd, (mode_t)mode) != 0)
        *step = "setting the temporary file's mode";
    else if (write_all(fd, data, len) != 0)
        *step = "writing the temporary file";
    else if (fsync(fd) != 0)
        *step = "flushing the temporary file to disk";
    else
        rc = 0;
    int err = errno;
    if (close(fd) != 0 && rc == 0) {
        err = errno;
        *step = "closing the temporary file";
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        err = errno;
        *step = "renaming the temporary file over it";
        rc = -1;
    }
    if (rc != 0) {
        unlink(tmp);
        free(tmp);
        errno = err;
        return -1;
    }
    free(tmp);
    /* Make the rename itself durable. Best effort: the new file is in
     * place whatever this says, and some file systems cannot sync a
     * directory. */
    char *dir = dir_len ? strndup(path, dir_len) : NULL;
    int dfd = dir_len && !dir ? -1 : open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(dir);
    return 0;
}
