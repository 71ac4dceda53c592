/*
 * procinfo.c - the user and command line of a process, from /proc.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "procinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Up to size - 1 bytes of a /proc file; its length, or -1. */
static long read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t r = read(fd, buf + got, size - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (long)got;
}

/* The owner of /proc/PID (the process's effective user), by name. */
static void user_of(uid_t uid, char *user, size_t size)
{
    char buf[1024];
    struct passwd pw, *found = NULL;
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found && found->pw_name[0])
        snprintf(user, size, "%s", found->pw_name);
    else
        snprintf(user, size, "%lu", (unsigned long)uid);
}

/* The arguments joined by blanks; "[comm]" without any; "?" unreadable. */
static void command_of(const char *dir, char *cmd, size_t size)
{
    char path[64], comm[64];
    snprintf(path, sizeof path, "%s/cmdline", dir);
    long n = read_small(path, cmd, size);
    if (n < 0) {
        snprintf(cmd, size, "?");
        return;
    }
    for (long i = 0; i < n; i++)
        if (cmd[i] == '\0')
            cmd[i] = ' ';
    while (n > 0 && cmd[n - 1] == ' ')
        cmd[--n] = '\0';
    if (n > 0)
        return;
    snprintf(path, sizeof path, "%s/comm", dir);
    long c = read_small(path, comm, sizeof comm);
    while (c > 0 && comm[c - 1] == '\n')
        comm[--c] = '\0';
    snprintf(cmd, size, c > 0 ? "[%s]" : "?", comm);
}

int smi_process_info(unsigned pid, char *user, size_t user_size, char *cmd, size_t cmd_size)
{
    char dir[32];
    struct stat st;
    snprintf(dir, sizeof dir, "/proc/%u", pid);
    if (pid == 0 || stat(dir, &st) != 0) {
        snprintf(user, user_size, "-");
        snprintf(cmd, cmd_size, "-");
        return 0;
    }
    user_of(st.st_uid, user, user_size);
    command_of(dir, cmd, cmd_size);
    return 1;
}
