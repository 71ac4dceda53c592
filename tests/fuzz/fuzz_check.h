/*
 * fuzz_check.h - CHECK(), the assertion of the libFuzzer harnesses: prints
 * the failed condition and aborts, which libFuzzer reports as a crash with
 * the input that caused it.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_FUZZ_CHECK_H
#define GPUPROBE_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
            abort();                                                          \
        }                                                                     \
    } while (0)

#endif
