/*
 * text.c - the program's name, text output under the quoting rule, UTF-8
 * repair, messages on stderr, and the end: write errors and exit statuses.
 * The bottom layer of tools/common: it calls only the C library.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "gpuprobe";
static int out_of_memory; /* text was lost: cli_finish() says so */

/* The line cli_put() is building. */
static char *line;
static size_t line_len, line_cap;

void cli_set_prog(const char *name)
{
    prog = name && *name ? name : "gpuprobe";
}

const char *cli_prog(void)
{
    return prog;
}

/* ---- quoting --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlong forms */
        else if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

size_t cli_quote(char *dst, size_t size, const char *src, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
#define EMIT(ch)                                                               \
    do {                                                                       \
        if (o + 1 < size)                                                      \
            dst[o] = (char)(ch);                                               \
        o++;                                                                   \
    } while (0)
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n = utf8_seq(s + i, len - i);
        /* C1 controls: U+0080-U+009F, encoded C2 80 - C2 9F. */
        int c1 = n == 2 && c == 0xc2 && s[i + 1] <= 0x9f;
        if (c == '\\') {
            EMIT('\\');
            EMIT('\\');
            i++;
        } else if (c == '\t' || c == '\n' || c == '\r') {
            EMIT('\\');
            EMIT(c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
            i++;
        } else if (n == 0 || c < 0x20 || c == 0x7f || c1) {
            size_t k = c1 ? 2 : 1;
            for (size_t j = 0; j < k; j++) {
                EMIT('\\');
                EMIT('x');
                EMIT(hex[s[i + j] >> 4]);
                EMIT(hex[s[i + j] & 15]);
            }
            i += k;
        } else {
            for (size_t j = 0; j < n; j++)
                EMIT(s[i + j]);
            i += n;
        }
    }
#undef EMIT
    if (size > 0)
        dst[o < size ? o : size - 1] = '\0';
    return o;
}

char *cli_utf8_clean(const char *s)
{
    static const char fffd[] = "\xef\xbf\xbd";
    size_t len = strlen(s), bad = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq(u + i, len - i);
        bad += n == 0;
        i += n ? n : 1;
    }
    char *out = malloc(len + 2 * bad + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq(u + i, len - i);
        if (n == 0) {
            memcpy(out + o, fffd, 3);
            o += 3;
            i++;
        } else {
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        }
    }
    out[o] = '\0';
    return out;
}

char *cli_vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *buf = malloc((size_t)n + 1);
    if (buf)
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
    return buf;
}

/* Quote text into a new buffer; NULL when out of memory. */
static char *quoted(const char *text)
{
    size_t len = strlen(text);
    size_t need = cli_quote(NULL, 0, text, len);
    char *q = malloc(need + 1);
    if (q)
        cli_quote(q, need + 1, text, len);
    return q;
}

/* ---- text output ------------------------------------------------------------ */

static void line_append(const char *fmt, va_list ap)
{
    char *piece = cli_vformat(fmt, ap);
    size_t n = piece ? strlen(piece) : 0;
    if (!piece || line_len + n + 1 > line_cap) {
        size_t cap = line_cap ? line_cap : 128;
        while (piece && cap < line_len + n + 1)
            cap *= 2;
        char *grown = piece ? realloc(line, cap) : NULL;
        if (!grown) {
            out_of_memory = 1;
            free(piece);
            return;
        }
        line = grown;
        line_cap = cap;
    }
    memcpy(line + line_len, piece, n + 1);
    line_len += n;
    free(piece);
}

static void line_end(void)
{
    if (line) {
        char *q = quoted(line);
        if (q)
            fputs(q, stdout);
        else
            out_of_memory = 1;
        free(q);
        line_len = 0;
        line[0] = '\0';
    }
    fputc('\n', stdout);
}

void cli_put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line_append(fmt, ap);
    va_end(ap);
}

void cli_endl(void)
{
    line_end();
}

void cli_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line_append(fmt, ap);
    va_end(ap);
    line_end();
}

/* ---- messages ------------------------------------------------------------- */

static void vmessage(const char *fmt, va_list ap)
{
    char *msg = cli_vformat(fmt, ap);
    char *q = msg ? quoted(msg) : NULL;
    fprintf(stderr, "%s: %s\n", cli_prog(), q ? q : "(out of memory formatting a message)");
    free(q);
    free(msg);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

/* ---- the end ----------------------------------------------------------------- */

int cli_finish(int status)
{
    if (line_len > 0)
        line_end();
    free(line);
    line = NULL;
    line_len = line_cap = 0;
    if (out_of_memory) {
        cli_err("out of memory: some output was lost");
        if (status == CLI_EXIT_OK)
            status = CLI_EXIT_FAIL;
    }
    /* As coreutils' close_stdout(): a write error that stdio kept, or one
     * that the final flush or close meets, is reported; the reason is
     * known when the failing write happens here. */
    int failed = ferror(stdout) != 0, err = 0;
    errno = 0;
    if (fflush(stdout) != 0) {
        failed = 1;
        err = errno;
    }
    errno = 0;
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (failed) {
        if (err)
            cli_err("write error: %s", strerror(err));
        else
            cli_err("write error");
        if (status == CLI_EXIT_OK)
            status = CLI_EXIT_FAIL;
    }
    if (fflush(stderr) != 0 && status == CLI_EXIT_OK)
        status = CLI_EXIT_FAIL;
    return status;
}
