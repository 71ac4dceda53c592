/*
 * file.c - replace a file atomically: readers see the old file or the new
 * one, never a part of either, and a failure leaves the old one as it was.
 * A symbolic link is followed to the file it names, which is replaced in
 * its own directory; anything that is not a regular file (a device, a
 * FIFO, a socket, a directory) is refused, never replaced.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "file.h"

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

/* The target of the symbolic link at link (malloc'd): relative targets are
 * relative to the link's directory. NULL with errno set on failure. */
static char *link_target(const char *link, size_t hint)
{
    size_t cap = hint + 1 > 64 ? hint + 1 : 64;
    for (;;) {
        char *buf = malloc(cap);
        if (!buf)
            return NULL;
        ssize_t n = readlink(link, buf, cap);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            const char *slash = strrchr(link, '/');
            if (buf[0] == '/' || !slash)
                return buf;
            size_t dir_len = (size_t)(slash - link) + 1;
            char *joined = malloc(dir_len + (size_t)n + 1);
            if (joined) {
                memcpy(joined, link, dir_len);
                memcpy(joined + dir_len, buf, (size_t)n + 1);
            }
            free(buf);
            return joined;
        }
        free(buf);
        cap *= 2; /* the link grew, or its size was not known (st_size 0) */
    }
}

/* path after following symbolic links, as open() would (at most 40, as
 * Linux allows; then ELOOP), malloc'd; *st is what lstat() says of it, or
 * st_mode 0 when nothing is there yet. NULL with errno set on failure. */
static char *follow_links(const char *path, struct stat *st)
{
    char *cur = strdup(path);
    for (int hop = 0; cur; hop++) {
        if (lstat(cur, st) != 0) {
            if (errno != ENOENT)
                break;
            st->st_mode = 0; /* a file still to be made (or a missing directory) */
            return cur;
        }
        if (!S_ISLNK(st->st_mode))
            return cur;
        if (hop == 40) {
            errno = ELOOP;
            break;
        }
        char *next = link_target(cur, (size_t)st->st_size);
        free(cur);
        cur = next;
    }
    int err = errno;
    free(cur);
    errno = err;
    return NULL;
}

/* What a file that is not a regular one is, for the refusal. */
static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : "a special file";
}

/* Write data to a new temporary file beside target and rename it over
 * target. 0, or -1 with errno set and *step naming what failed. */
static int replace_regular(const char *target, const char *data, size_t len, mode_t mode,
                           const char **step)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    char *tmp = NULL;
    *step = "creating a temporary file beside it";
    int fd = create_temp(target, dir_len, base, mode, &tmp);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        errno = err;
        return -1;
    }
    /* The mode asked for, whatever the umask. */
    int rc = -1;
    if (fchmod(fd, mode) != 0)
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
    if (rc == 0 && rename(tmp, target) != 0) {
        err = errno;
        *step = "renaming the temporary file over it";
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    if (rc != 0) {
        errno = err;
        return -1;
    }
    /* Make the rename itself durable. Best effort: the new file is in
     * place whatever this says, and some file systems cannot sync a
     * directory. */
    char *dir = dir_len ? strndup(target, dir_len) : NULL;
    int dfd = dir_len && !dir ? -1 : open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(dir);
    return 0;
}

int cli_replace_file(const char *path, const char *data, size_t len, unsigned mode, char *why,
                     size_t why_size)
{
    struct stat st;
    const char *step = "naming the file";
    char *target = NULL;
    int rc = -1;
    const char *slash = strrchr(path, '/');
    if (!*(slash ? slash + 1 : path)) {
        errno = EISDIR;
    } else if (!(target = follow_links(path, &st))) {
        step = "following its symbolic links";
    } else if (st.st_mode && !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "it is %s, not a regular file; it was left as it is",
                 kind_of(st.st_mode));
        free(target);
        return -1;
    } else {
        rc = replace_regular(target, data, len, (mode_t)mode, &step);
    }
    if (rc != 0) {
        int err = errno;
        /* Name the file a link led to: that is where it failed. */
        int linked = target && strcmp(target, path) != 0;
        snprintf(why, why_size, "%s%s%.*s%s: %s (the old file, if any, is unchanged)", step,
                 linked ? " (at " : "", linked ? 400 : 0, linked ? target : "",
                 linked ? ", where its link leads)" : "", strerror(err));
        errno = err;
    }
    free(target);
    return rc;
}
