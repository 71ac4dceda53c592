/*
 * labels.c - Kubernetes label syntax (see labels.h for the rules) and the
 * value sanitiser.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "labels.h"

#include <stdint.h>
#include <string.h>

static int alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* What a name or a value may hold between its first and last character. */
static int inner(unsigned char c)
{
    return alnum(c) || c == '-' || c == '_' || c == '.';
}

/* A name or a value: (alnum ([-_.] | alnum)*)? alnum, at most max bytes. */
enum { SEG_OK, SEG_EMPTY, SEG_LONG, SEG_CHAR, SEG_ENDS };

static int segment(const char *s, size_t n, size_t max)
{
    if (n == 0)
        return SEG_EMPTY;
    if (n > max)
        return SEG_LONG;
    for (size_t i = 0; i < n; i++)
        if (!inner((unsigned char)s[i]))
            return SEG_CHAR;
    if (!alnum((unsigned char)s[0]) || !alnum((unsigned char)s[n - 1]))
        return SEG_ENDS;
    return SEG_OK;
}

static const char *prefix_error(const char *p, size_t n)
{
    static const char bad[] =
        "the prefix must be a DNS subdomain: lower-case letters, digits, '-' and "
        "'.', each dot-separated part starting and ending with a letter or digit";
    if (n == 0)
        return "the prefix is empty";
    if (n > LABEL_PREFIX_MAX)
        return "the prefix is longer than 253 characters";
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != '.') {
            unsigned char c = (unsigned char)p[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return bad;
            continue;
        }
        /* A part ends at i: not empty, no '-' at either end. */
        if (i == start || p[start] == '-' || p[i - 1] == '-')
            return bad;
        start = i + 1;
    }
    return NULL;
}

const char *label_prefix_error(const char *prefix)
{
    return prefix ? prefix_error(prefix, strlen(prefix)) : "no prefix";
}

const char *label_key_error(const char *key)
{
    static const char *const name_error[] = {
        [SEG_EMPTY] = "the name is empty",
        [SEG_LONG] = "the name is longer than 63 characters",
        [SEG_CHAR] = "the name may hold only letters, digits, '-', '_' and '.'",
        [SEG_ENDS] = "the name must start and end with a letter or digit",
    };
    if (!key)
        return "no key";
    const char *name = key, *slash = strchr(key, '/');
    if (slash) {
        if (strchr(slash + 1, '/'))
            return "a key holds at most one '/'";
        const char *why = prefix_error(key, (size_t)(slash - key));
        if (why)
            return why;
        name = slash + 1;
    }
    int r = segment(name, strlen(name), LABEL_NAME_MAX);
    return r == SEG_OK ? NULL : name_error[r];
}

const char *label_value_error(const char *value)
{
    static const char *const value_error[] = {
        [SEG_LONG] = "the value is longer than 63 characters",
        [SEG_CHAR] = "the value may hold only letters, digits, '-', '_' and '.'",
        [SEG_ENDS] = "the value must start and end with a letter or digit",
    };
    if (!value)
        return "no value";
    int r = segment(value, strlen(value), LABEL_VALUE_MAX);
    return r == SEG_OK || r == SEG_EMPTY ? NULL : value_error[r];
}

/* ---- the sanitiser ---- */

/* Where a too-long value is cut before "-" and the hash: 54 + 1 + 8 = 63. */
#define CUT 54

static uint32_t fnv1a(const unsigned char *s, size_t n)
{
    uint32_t h = UINT32_C(2166136261);
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= UINT32_C(16777619);
    }
    return h;
}

static void hex8(char *dst, uint32_t h)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 7; i >= 0; i--, h >>= 4)
        dst[i] = digits[h & 15];
}

size_t label_value_from(char *dst, const char *src, size_t len)
{
    const unsigned char *s = (const unsigned char *)src;
    /* The first LABEL_VALUE_MAX + 1 characters of the cleaned text, after
     * the leading trim; `total` counts all of it, `end` is one past its
     * last letter or digit (so the trailing trim is dst[0..end)). */
    char buf[LABEL_VALUE_MAX + 1];
    size_t total = 0, end = 0;
    int sep = 0; /* a run of replaced bytes is pending */
#define PUT(ch)                                                                \
    do {                                                                       \
        if (total < sizeof buf)                                                \
            buf[total] = (char)(ch);                                           \
        total++;                                                               \
    } while (0)
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (!inner(c)) {
            sep = 1;
            continue;
        }
        if (total == 0 && !alnum(c)) { /* leading trim */
            sep = 0;
            continue;
        }
        if (sep && c == '-')
            continue; /* a '-' beside a replaced run joins it */
        if (sep && total > 0 && !(total <= sizeof buf && buf[total - 1] == '-'))
            PUT('-');
        sep = 0;
        PUT(c);
        if (alnum(c))
            end = total;
    }
#undef PUT
    size_t n;
    if (end == 0) {
        hex8(dst, fnv1a(s, len));
        n = 8;
    } else if (end <= LABEL_VALUE_MAX) {
        memcpy(dst, buf, end);
        n = end;
    } else {
        n = CUT;
        while (!alnum((unsigned char)buf[n - 1]))
            n--; /* buf[0] is a letter or digit */
        memcpy(dst, buf, n);
        dst[n++] = '-';
        hex8(dst + n, fnv1a(s, len));
        n += 8;
    }
    dst[n] = '\0';
    return n;
}
