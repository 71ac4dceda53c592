/*
 * fuzz_labels.c - libFuzzer harness for gpuprobe-nfd's Kubernetes label
 * rules and value sanitiser (tools/nfd/labels.c, compiled in here: it is
 * not part of the library).
 *
 * Input: any bytes. Checked beyond "no crash, no sanitizer report":
 * - label_value_from() always gives a non-empty value of at most 63
 *   characters that label_value_error() accepts; sanitising it again
 *   changes nothing; a valid non-empty input comes back unchanged;
 * - label_value_error(), label_prefix_error() and label_key_error() agree
 *   with a second, deliberately plain implementation of the same rules
 *   (written from the Kubernetes documentation, character by character).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/nfd/labels.c"
#include "fuzz_check.h"

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A name (empty_ok: a value) of at most 63 characters. */
static int ref_name(const char *s, size_t n, int empty_ok)
{
    if (n == 0)
        return empty_ok;
    if (n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* A DNS subdomain: parts of [a-z0-9-] joined by '.', each starting and
 * ending with [a-z0-9], 253 characters at most. */
static int ref_prefix(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        size_t len = i - start;
        if (len == 0)
            return 0;
        for (size_t j = start; j < i; j++) {
            char c = s[j];
            int lower = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!lower && !(c == '-' && j != start && j != i - 1))
                return 0;
        }
        start = i + 1;
    }
    return 1;
}

static int ref_key(const char *s, size_t n)
{
    const char *slash = memchr(s, '/', n);
    if (!slash)
        return ref_name(s, n, 0);
    size_t p = (size_t)(slash - s);
    return ref_prefix(s, p) && ref_name(slash + 1, n - p - 1, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[LABEL_VALUE_MAX + 1], again[LABEL_VALUE_MAX + 1];
    size_t n = label_value_from(out, (const char *)data, size);
    CHECK(n >= 1 && n <= LABEL_VALUE_MAX && n == strlen(out));
    CHECK(label_value_error(out) == NULL);
    CHECK(label_value_from(again, out, n) == n && strcmp(again, out) == 0);

    /* The checkers take C strings: the input up to its first NUL. */
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    size_t len = strlen(s);
    int value_ok = label_value_error(s) == NULL;
    CHECK(value_ok == ref_name(s, len, 1));
    CHECK((label_prefix_error(s) == NULL) == ref_prefix(s, len));
    CHECK((label_key_error(s) == NULL) == ref_key(s, len));
    if (value_ok && len > 0) {
        CHECK(label_value_from(again, s, len) == len && strcmp(again, s) == 0);
    }
    free(s);
    return 0;
}
