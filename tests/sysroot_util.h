/*
 * sysroot_util.h - helpers for unit tests that build a fake /proc and /sys
 * tree for the gp_test_set_sysroot() seam. Header-only: each test program
 * is one translation unit. Include after <cmocka.h> and "internal.h".
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_TEST_SYSROOT_UTIL_H
#define GPUPROBE_TEST_SYSROOT_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p PATH (errors surface when put() opens the file). */
static inline void sr_mkdirs(const char *path)
{
    char p[GP_PATH_LEN];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

/* Write TEXT to ROOT/REL, creating the directories on the way. */
static inline void sr_put(const char *root, const char *rel, const char *text)
{
    char p[GP_PATH_LEN];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    sr_mkdirs(p);
    *slash = '/';
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* rm -rf ROOT (a mkdtemp() directory of the test). */
static inline void sr_rm_tree(const char *root)
{
    char cmd[GP_PATH_LEN + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

#endif
