/*
 * nfd_check.c - check a feature file the way Node Feature Discovery's local
 * source reads it, and every label in it against the Kubernetes rules
 * (tools/nfd/labels.c), for the tests of gpuprobe-nfd.
 *
 * usage: nfd_check [options] FILE      (FILE "-": standard input)
 *
 *   --prefix P        every label is under P/
 *   --has KEY[=ERE]   KEY is there (and its whole value matches ERE)
 *   --lacks KEY       KEY is not there
 *   --count N         exactly N labels
 *   --expires-in S    an expiry directive names a time S seconds from now
 *                     (within 5 minutes)
 *
 * The format (NFD's source/local): at most 64 KiB; lines are trimmed of
 * blanks; empty lines and lines starting with '#' are skipped, except the
 * directives "# +expiry-time=<RFC 3339 time>", "# +no-label" and
 * "# +no-feature" (an unknown directive is an error NFD logs); any other
 * line is "key[=value]", the value "true" when there is no '='. Beyond what
 * NFD requires, the file must be what gpuprobe-nfd promises: printable
 * ASCII, one label per line without blanks around it, every key with a
 * prefix outside kubernetes.io and k8s.io, no key twice, a valid value, an
 * expiry time in the future, a final newline.
 *
 * Prints "ok: N labels" and exits 0, or prints each problem and exits 1
 * (2: bad usage).
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#define _GNU_SOURCE /* timegm */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "labels.h"

#define MAX_LABELS 256
#define MAX_FILE 65536

static int problems;

static void problem(int line, const char *fmt, const char *a, const char *b)
{
    printf("FAIL: line %d: ", line);
    printf(fmt, a, b);
    putchar('\n');
    problems++;
}

/* RFC 3339 as Go's time.RFC3339 reads it: YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm). */
static int parse_rfc3339(const char *s, time_t *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int Y, M, D, h, m, sec, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &sec, &n) != 6 || n != 19)
        return -1;
    const char *p = s + n;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    long offset = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5 || oh > 23 || om > 59)
            return -1;
        offset = (*p == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
        p += 6;
    } else {
        return -1;
    }
    if (*p || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return -1;
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    *out = timegm(&tm) - offset;
    return 0;
}

static int reserved(const char *key)
{
    static const char *const ns[] = {"kubernetes.io", "k8s.io"};
    const char *slash = strchr(key, '/');
    size_t n = slash ? (size_t)(slash - key) : 0;
    for (size_t i = 0; i < 2; i++) {
        size_t r = strlen(ns[i]);
        if ((n == r && memcmp(key, ns[i], r) == 0) ||
            (n > r && key[n - r - 1] == '.' && memcmp(key + n - r, ns[i], r) == 0))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *prefix = NULL, *file = NULL;
    const char *has[64], *lacks[64];
    size_t n_has = 0, n_lacks = 0;
    long count = -1, expires_in = -1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--prefix") == 0)
            prefix = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--has") == 0 && n_has < 64)
            has[n_has++] = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--lacks") == 0 && n_lacks < 64)
            lacks[n_lacks++] = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--count") == 0)
            count = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--expires-in") == 0)
            expires_in = atol(argv[++i]);
        else if (!file && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
            file = argv[i];
        else {
            fprintf(stderr, "nfd_check: bad argument '%s' (see the source's header)\n", argv[i]);
            return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "nfd_check: no file\n");
        return 2;
    }
    FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
    if (!f) {
        perror(file);
        return 1;
    }
    static char text[MAX_FILE + 2], orig[MAX_FILE + 2];
    size_t len = fread(text, 1, sizeof text - 1, f);
    if (f != stdin)
        fclose(f);
    text[len] = '\0';
    memcpy(orig, text, len + 1);
    if (len > MAX_FILE)
        problem(0, "larger than %s bytes: NFD ignores the file%s", "65536", "");
    if (len > 0 && text[len - 1] != '\n')
        problem(0, "no newline at the end%s%s", "", "");
    for (size_t i = 0; i < len; i++)
        if (text[i] != '\n' && (text[i] < 0x20 || text[i] > 0x7e)) {
            problem(0, "a byte that is not printable ASCII%s%s", "", "");
            break;
        }

    static char keys[MAX_LABELS][LABEL_KEY_MAX + 2], values[MAX_LABELS][LABEL_VALUE_MAX + 2];
    size_t n = 0;
    int have_expiry = 0;
    time_t expiry = 0, now = time(NULL);
    int lineno = 0;
    for (char *line = text, *next; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t l = strlen(line);
        if (l == 0 || strchr(" \t\r", line[0]) || strchr(" \t\r", line[l - 1])) {
            problem(lineno, "an empty line, or blanks around '%s'%s", line, "");
            continue;
        }
        if (line[0] == '#') {
            if (strncmp(line, "# +", 3) != 0)
                continue;
            const char *d = line + 3;
            if (strncmp(d, "expiry-time=", 12) == 0) {
                if (parse_rfc3339(d + 12, &expiry) != 0)
                    problem(lineno, "'%s' is not an RFC 3339 time%s", d + 12, "");
                else if (expiry <= now)
                    problem(lineno, "the labels expired at %s: NFD drops them%s", d + 12, "");
                have_expiry = 1;
            } else if (strcmp(d, "no-label") != 0 && strcmp(d, "no-feature") != 0) {
                problem(lineno, "unknown directive '%s'%s", d, "");
            }
            continue;
        }
        char *eq = strchr(line, '=');
        const char *value = eq ? eq + 1 : "true";
        if (eq)
            *eq = '\0';
        const char *why = label_key_error(line);
        if (why)
            problem(lineno, "key '%s': %s", line, why);
        else if (!strchr(line, '/'))
            problem(lineno, "key '%s' has no prefix (NFD would add its own)%s", line, "");
        else if (reserved(line))
            problem(lineno, "key '%s' is in a namespace kept for Kubernetes%s", line, "");
        else if (prefix && (strncmp(line, prefix, strlen(prefix)) != 0 || line[strlen(prefix)] != '/'))
            problem(lineno, "key '%s' is not under %s/", line, prefix);
        why = label_value_error(value);
        if (why)
            problem(lineno, "value '%s': %s", value, why);
        for (size_t k = 0; k < n; k++)
            if (strcmp(keys[k], line) == 0)
                problem(lineno, "key '%s' twice%s", line, "");
        if (n < MAX_LABELS && strlen(line) <= LABEL_KEY_MAX && strlen(value) <= LABEL_VALUE_MAX) {
            strcpy(keys[n], line);
            strcpy(values[n], value);
            n++;
        }
    }

    for (size_t i = 0; i < n_has; i++) {
        char key[LABEL_KEY_MAX + 2];
        const char *eq = strchr(has[i], '=');
        size_t kl = eq ? (size_t)(eq - has[i]) : strlen(has[i]);
        snprintf(key, sizeof key, "%.*s", (int)kl, has[i]);
        size_t k = 0;
        while (k < n && strcmp(keys[k], key) != 0)
            k++;
        if (k == n) {
            problem(0, "no label %s%s", key, "");
            continue;
        }
        if (eq) {
            char anchored[512];
            regex_t re;
            snprintf(anchored, sizeof anchored, "^(%s)$", eq + 1);
            if (regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) != 0) {
                fprintf(stderr, "nfd_check: bad regular expression '%s'\n", eq + 1);
                return 2;
            }
            if (regexec(&re, values[k], 0, NULL, 0) != 0)
                problem(0, "%s does not match the expected value", has[i], "");
            regfree(&re);
        }
    }
    for (size_t i = 0; i < n_lacks; i++)
        for (size_t k = 0; k < n; k++)
            if (strcmp(keys[k], lacks[i]) == 0)
                problem(0, "label %s=%s should not be there", keys[k], values[k]);
    if (count >= 0 && (size_t)count != n) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%zu", n);
        snprintf(b, sizeof b, "%ld", count);
        problem(0, "%s labels, expected %s", a, b);
    }
    if (expires_in >= 0) {
        long off = have_expiry ? (long)(expiry - now) - expires_in : 0;
        if (!have_expiry)
            problem(0, "no expiry directive%s%s", "", "");
        else if (off < -300 || off > 300)
            problem(0, "the expiry time is %s seconds from the expected one%s", "more than 300", "");
    }
    if (problems) {
        printf("--- the file ---\n%s", orig);
        return 1;
    }
    printf("ok: %zu labels\n", n);
    return 0;
}
