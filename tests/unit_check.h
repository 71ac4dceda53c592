/*
 * unit_check.h - what many unit tests do first: a context that must be
 * created, and a text (an error message) that must contain a part, each
 * asserted. Include after <cmocka.h> and gpuprobe.h.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_TESTS_UNIT_CHECK_H
#define GPUPROBE_TESTS_UNIT_CHECK_H

#include <string.h>

/* A new context (flags 0); the test fails when it cannot be created. */
static inline gpuprobe_context *new_ctx(void)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    assert_non_null(ctx);
    return ctx;
}

/* The test fails, showing both, unless text contains part. */
static inline void assert_contains(const char *text, const char *part)
{
    if (!text || !strstr(text, part))
        fail_msg("\"%s\" does not contain \"%s\"", text ? text : "(null)", part);
}

#endif
