/* tests/fakelib_dir.h - where the fake libraries of tests/fakelib.cmake
 * are, for tests/test_loader.c and tests/test_nvml.c.
 *
 * CMake gives their directory as GP_FAKELIB_DIR, a path of the machine that
 * built the tests. A build carried to another machine (scripts/gpu-bundle,
 * scripts/gpu-check) has them at the same place relative to the test
 * program: <build>/tests/fakelib beside <build>/tests/test_*. So when the
 * built-in path is not there, the directory is found next to the running
 * program. After this header GP_FAKELIB_DIR is that directory, a string
 * (const char *, not a literal) of fewer than 2048 bytes, which leaves the
 * test's GP_PATH_LEN buffers room for the names put after it. */
#ifndef GP_TESTS_FAKELIB_DIR_H
#define GP_TESTS_FAKELIB_DIR_H

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GP_FAKELIB_DIR
#error "GP_FAKELIB_DIR must name the fake libraries' directory (tests/fakelib.cmake)"
#endif

static const char gp_fakelib_built[] = GP_FAKELIB_DIR;
#undef GP_FAKELIB_DIR

static const char *gp_fakelib_dir(void)
{
    static char dir[2048];
    if (dir[0])
        return dir;
    struct stat st;
    char exe[PATH_MAX];
    ssize_t n;
    if (stat(gp_fakelib_built, &st) != 0 &&
        (n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if (snprintf(dir, sizeof dir, "%s/fakelib", exe) < (int)sizeof dir)
                return dir;
        }
    }
    snprintf(dir, sizeof dir, "%s", gp_fakelib_built);
    return dir;
}

#define GP_FAKELIB_DIR gp_fakelib_dir()

#endif
