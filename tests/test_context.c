/*
 * test_context.c - version, status strings, context lifetime, last error,
 * and the quoting of untrusted text in messages.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gpuprobe.h"
#include "internal.h"

static void test_version_numbers(void **state)
{
    (void)state;
    assert_int_equal(gpuprobe_version(), GPUPROBE_VERSION_NUMBER);
    assert_int_equal(GPUPROBE_VERSION_NUMBER,
                     GPUPROBE_VERSION_MAJOR * 10000 + GPUPROBE_VERSION_MINOR * 100 +
                         GPUPROBE_VERSION_PATCH);
    assert_string_equal(gpuprobe_version_string(), GPUPROBE_VERSION_STRING);
}

static void test_version_string_format(void **state)
{
    (void)state;
    const char *v = gpuprobe_version_string();
    assert_non_null(v);
    unsigned ma = 99, mi = 99, pa = 99;
    int consumed = 0;
    assert_int_equal(sscanf(v, "%u.%u.%u%n", &ma, &mi, &pa, &consumed), 3);
    assert_int_equal((size_t)consumed, strlen(v));
    assert_int_equal(ma, GPUPROBE_VERSION_MAJOR);
    assert_int_equal(mi, GPUPROBE_VERSION_MINOR);
    assert_int_equal(pa, GPUPROBE_VERSION_PATCH);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", GPUPROBE_VERSION_MAJOR,
             GPUPROBE_VERSION_MINOR, GPUPROBE_VERSION_PATCH);
    assert_string_equal(v, expect);
}

#define N_STATUS 13 /* GPUPROBE_OK .. GPUPROBE_ERR_INTERNAL */

static void test_status_strings(void **state)
{
    (void)state;
    const char *text[N_STATUS], *name[N_STATUS];
    for (int i = 0; i < N_STATUS; i++) {
        text[i] = gpuprobe_status_string((gpuprobe_status)i);
        name[i] = gpuprobe_status_name((gpuprobe_status)i);
        assert_non_null(text[i]);
        assert_non_null(name[i]);
        assert_true(strlen(text[i]) > 0);
        assert_true(strlen(name[i]) > 0);
        /* names are lower-case tokens */
        for (const char *p = name[i]; *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || *p == '_');
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(text[i], text[j]);
            assert_string_not_equal(name[i], name[j]);
        }
    }
    assert_string_equal(gpuprobe_status_name(GPUPROBE_OK), "ok");
    assert_string_equal(gpuprobe_status_name(GPUPROBE_ERR_INVALID_ARGUMENT),
                        "invalid_argument");
    assert_string_equal(gpuprobe_status_name(GPUPROBE_ERR_INTERNAL), "internal");
    /* out of range: fixed, non-NULL, distinct from every real value */
    const gpuprobe_status bad[] = {(gpuprobe_status)N_STATUS, (gpuprobe_status)-1,
                                   (gpuprobe_status)1000000};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        const char *t = gpuprobe_status_string(bad[b]);
        const char *n = gpuprobe_status_name(bad[b]);
        assert_non_null(t);
        assert_non_null(n);
        assert_string_equal(n, "unknown");
        for (int i = 0; i < N_STATUS; i++) {
            assert_string_not_equal(t, text[i]);
            assert_string_not_equal(n, name[i]);
        }
    }
}

#define N_CAUSE 11 /* GPUPROBE_CUDA_AVAILABLE .. GPUPROBE_CUDA_OTHER */

static void test_cause_strings(void **state)
{
    (void)state;
    const char *text[N_CAUSE], *name[N_CAUSE];
    for (int i = 0; i < N_CAUSE; i++) {
        text[i] = gpuprobe_cuda_cause_string((gpuprobe_cuda_cause)i);
        name[i] = gpuprobe_cuda_cause_name((gpuprobe_cuda_cause)i);
        assert_non_null(text[i]);
        assert_non_null(name[i]);
        assert_true(strlen(text[i]) > 0);
        for (const char *p = name[i]; *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || *p == '_');
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(text[i], text[j]);
            assert_string_not_equal(name[i], name[j]);
        }
    }
    assert_string_equal(gpuprobe_cuda_cause_name(GPUPROBE_CUDA_AVAILABLE), "available");
    assert_string_equal(gpuprobe_cuda_cause_name(GPUPROBE_CUDA_NO_DRIVER), "no_driver");
    assert_string_equal(gpuprobe_cuda_cause_name(GPUPROBE_CUDA_OTHER), "other");
    const gpuprobe_cuda_cause bad[] = {(gpuprobe_cuda_cause)N_CAUSE,
                                       (gpuprobe_cuda_cause)-1};
    for (size_t b = 0; b < 2; b++) {
        const char *t = gpuprobe_cuda_cause_string(bad[b]);
        const char *n = gpuprobe_cuda_cause_name(bad[b]);
        assert_non_null(t);
        assert_string_equal(n, "unknown");
        for (int i = 0; i < N_CAUSE; i++) {
            assert_string_not_equal(t, text[i]);
            assert_string_not_equal(n, name[i]);
        }
    }
}

static void test_create_destroy(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    assert_non_null(ctx);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    gpuprobe_context_destroy(ctx);
    gpuprobe_context_destroy(NULL); /* accepted */
}

static void test_create_bad_flags(void **state)
{
    (void)state;
    gpuprobe_context *ctx = (gpuprobe_context *)&ctx; /* not NULL on entry */
    assert_int_equal(gpuprobe_context_create(&ctx, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    ctx = (gpuprobe_context *)&ctx;
    assert_int_equal(gpuprobe_context_create(&ctx, 0x80000000u),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
}

static void test_create_null(void **state)
{
    (void)state;
    assert_int_equal(gpuprobe_context_create(NULL, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
}

static void test_last_error_null(void **state)
{
    (void)state;
    const char *m = gpuprobe_last_error(NULL);
    assert_non_null(m);
    assert_true(strlen(m) > 0);
}

static void test_message_after_failure_and_success(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    int64_t v;
    /* a failure leaves a message naming the problem */
    assert_int_equal(gpuprobe_device_get_int(ctx, n + 5, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_NOT_FOUND);
    const char *m = gpuprobe_last_error(ctx);
    assert_non_null(m);
    assert_true(strlen(m) > 0);
    char idx[32];
    snprintf(idx, sizeof idx, "%zu", n + 5);
    assert_non_null(strstr(m, idx));
    /* the next successful call clears it */
    assert_int_equal(gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_KIND, &v), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    /* a NULL out-pointer is reported with a message too */
    assert_int_equal(gpuprobe_device_count(ctx, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_true(strlen(gpuprobe_last_error(ctx)) > 0);
    assert_int_equal(gpuprobe_device_count(ctx, &n), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    gpuprobe_context_destroy(ctx);
}

static void test_two_contexts_independent(void **state)
{
    (void)state;
    gpuprobe_context *a = NULL, *b = NULL;
    assert_int_equal(gpuprobe_context_create(&a, 0), GPUPROBE_OK);
    assert_int_equal(gpuprobe_context_create(&b, 0), GPUPROBE_OK);
    assert_ptr_not_equal(a, b);
    int64_t v;
    assert_int_equal(gpuprobe_device_get_int(a, 1000, GPUPROBE_ATTR_KIND, &v),
                     GPUPROBE_ERR_NOT_FOUND);
    assert_true(strlen(gpuprobe_last_error(a)) > 0);
    assert_string_equal(gpuprobe_last_error(b), "");
    gpuprobe_context_destroy(a);
    gpuprobe_context_destroy(b);
}

/* A failure always leaves a message: an empty formatted one is replaced
 * by the status text; the status is returned either way. */
static void test_fail_message_never_empty(void **state)
{
    (void)state;
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    assert_int_equal(gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "%s", ""), GPUPROBE_ERR_SYSTEM);
    assert_string_equal(gpuprobe_last_error(ctx), "operating-system query failed");
    assert_int_equal(gp_fail(ctx, GPUPROBE_ERR_NO_FIT, "%s", "why"), GPUPROBE_ERR_NO_FIT);
    assert_string_equal(gpuprobe_last_error(ctx), "why");
    /* also over an earlier message: its bytes past the first do not count */
    assert_int_equal(gp_fail(ctx, GPUPROBE_ERR_SYSTEM, "%s", ""), GPUPROBE_ERR_SYSTEM);
    assert_string_equal(gpuprobe_last_error(ctx), "operating-system query failed");
    assert_int_equal(gp_ok(ctx), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(ctx), "");
    assert_int_equal(gp_fail(NULL, GPUPROBE_ERR_CUDA, "%s", "x"), GPUPROBE_ERR_CUDA);
    assert_int_equal(gp_ok(NULL), GPUPROBE_OK);
    gpuprobe_context_destroy(ctx);
}

/* Bounded copies: always NUL-terminated within size, nothing written for
 * size 0, nothing past the terminator. */
static void test_bounded_copies(void **state)
{
    (void)state;
    char buf[16];
    memset(buf, '#', sizeof buf);
    gp_strlcpy(buf, "hello", 0);
    assert_int_equal(buf[0], '#');
    gp_strlcpy(buf, "hello", 1);
    assert_string_equal(buf, "");
    assert_int_equal(buf[1], '#');
    gp_strlcpy(buf, "hello", 4);
    assert_string_equal(buf, "hel");
    assert_int_equal(buf[4], '#');
    gp_strlcpy(buf, "hi", sizeof buf);
    assert_string_equal(buf, "hi");
    gp_strlcpy(buf, NULL, sizeof buf);
    assert_string_equal(buf, "");
    memset(buf, '#', sizeof buf);
    gp_snprintf(buf, 0, "%d", 42);
    assert_int_equal(buf[0], '#');
    gp_snprintf(buf, 1, "%d", 42);
    assert_string_equal(buf, "");
    gp_snprintf(buf, 4, "%s-%d", "ab", 123);
    assert_string_equal(buf, "ab-");
    assert_int_equal(buf[4], '#');
}

/* ---- gp_quote: untrusted text in messages ---- */

/* Quote text into a 64-byte array of which only `size` bytes are given to
 * gp_quote; the result must be `want`, and no byte after its NUL may be
 * written (the rest of the array is a canary). */
static void quote_is(size_t size, const char *text, size_t max, const char *want)
{
    char buf[64];
    memset(buf, '#', sizeof buf);
    gp_quote(buf, size, text, max);
    if (!want) { /* size 0: nothing at all is written */
        for (size_t i = 0; i < sizeof buf; i++)
            assert_int_equal(buf[i], '#');
        return;
    }
    if (strcmp(buf, want) != 0)
        fail_msg("gp_quote(size %zu, \"%s\", max %zu) gave \"%s\", want \"%s\"",
                 size, text ? text : "(null)", max, buf, want);
    assert_true(strlen(want) < size);
    for (size_t i = strlen(want) + 1; i < sizeof buf; i++)
        if (buf[i] != '#')
            fail_msg("gp_quote(size %zu, max %zu) wrote byte %zu, past its NUL",
                     size, max, i);
}

static void test_quote(void **state)
{
    (void)state;
    /* Short text: copied whole, whatever the limits. */
    quote_is(64, "hello", 40, "hello");
    quote_is(64, "hello", 5, "hello");   /* exactly the limit: not cut */
    quote_is(6, "hello", 40, "hello");   /* exactly the room: not cut */
    quote_is(64, "", 40, "");
    quote_is(1, "", 40, "");
    /* Cut by the length limit (the buffer has room): limit bytes, then "...". */
    quote_is(64, "hello world", 5, "hello...");
    quote_is(12, "hello world", 6, "hello ...");
    quote_is(64, "abc", 0, "...");
    /* Cut by the buffer: as much as fits with "..." in the last bytes. */
    quote_is(8, "hello world", 40, "hell...");
    quote_is(10, "hello world", 8, "hello ...");
    quote_is(5, "hello", 40, "h...");
    quote_is(4, "hello", 40, "...");
    quote_is(3, "hello", 40, "..");
    quote_is(2, "hello", 40, ".");
    quote_is(1, "hello", 40, "");
    quote_is(0, "hello", 40, NULL);
    /* Control and non-ASCII bytes become '?'; space and '~' are kept. */
    quote_is(64, "a\tb\x01\x7f\xc3\xa9", 40, "a?b????");
    quote_is(64, " ~\x1f\x80", 40, " ~??");
    quote_is(64, "x\ny", 2, "x?...");
    /* NULL text. */
    quote_is(64, NULL, 40, "(null)");
    quote_is(4, NULL, 40, "(nu");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_numbers),
        cmocka_unit_test(test_version_string_format),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_cause_strings),
        cmocka_unit_test(test_create_destroy),
        cmocka_unit_test(test_create_bad_flags),
        cmocka_unit_test(test_create_null),
        cmocka_unit_test(test_last_error_null),
        cmocka_unit_test(test_message_after_failure_and_success),
        cmocka_unit_test(test_two_contexts_independent),
        cmocka_unit_test(test_fail_message_never_empty),
        cmocka_unit_test(test_bounded_copies),
        cmocka_unit_test(test_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
