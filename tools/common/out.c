/*
 * out.c - the program's name, text output under the quoting rule, error
 * reports, and the end: write errors and exit statuses.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const cli_command *command;
static int json_mode;
static int out_of_memory; /* text was lost: cli_finish() says so */

/* The line cli_put() is building. */
static char *line;
static size_t line_len, line_cap;

const cli_command *cli_command_get(void);

const cli_command *cli_command_get(void)
{
    return command;
}

const char *cli_prog(void)
{
    return command && command->name ? command->name : "gpuprobe";
}

int cli_json(void)
{
    return json_mode;
}

void cli_start(const cli_command *cmd, int argc, char **argv)
{
    command = cmd;
    json_mode = 0;
    /* Hold closed standard descriptors: opened read-only, a held stdout or
     * stderr fails every write (EBADF), as the closed one would have. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int got = open("/dev/null", O_RDONLY);
            if (got >= 0 && got != fd)
                close(got);
        }
    }
    /* Walk the command line as cli_next() will, so that the value of an
     * option ("--device --json") is not taken for --json. */
    for (int i = 1; i < argc && argv[i]; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0)
            break;
        if (strncmp(arg, "--", 2) != 0 || strchr(arg, '='))
            continue;
        for (const cli_option *o = cmd->options; o && o->name; o++) {
            if (strcmp(arg + 2, o->name) != 0)
                continue;
            if (o->arg)
                i++;
            else if (strcmp(o->name, "json") == 0)
                json_mode = 1;
            break;
        }
    }
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

/* vsnprintf into a new buffer; NULL when out of memory. */
static char *vformat(const char *fmt, va_list ap)
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
    char *piece = vformat(fmt, ap);
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
    char *msg = vformat(fmt, ap);
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

/* "<what>: <status string>[: <last error>]", or NULL when out of memory. */
static char *status_message(gpuprobe_context *ctx, gpuprobe_status st,
                            const char *fmt, va_list ap)
{
    char *what = vformat(fmt, ap);
    /* Without a context (creating one failed) the status says it all. */
    const char *detail = ctx ? gpuprobe_last_error(ctx) : "";
    const char *status = gpuprobe_status_string(st);
    if (!what)
        return NULL;
    /* A message that starts with the status string already says it. */
    if (strncmp(detail, status, strlen(status)) == 0)
        status = "";
    size_t n = strlen(what) + strlen(status) + strlen(detail) + 8;
    char *msg = malloc(n);
    if (msg)
        snprintf(msg, n, "%s: %s%s%s", what, status, status[0] && detail[0] ? ": " : "",
                 detail[0] || status[0] ? detail : "");
    free(what);
    return msg;
}

char *cli_status_text(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = status_message(ctx, st, fmt, ap);
    va_end(ap);
    return msg;
}

void cli_report(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = status_message(ctx, st, fmt, ap);
    va_end(ap);
    cli_err("%s", msg ? msg : gpuprobe_status_string(st));
    free(msg);
}

int cli_fail(gpuprobe_context *ctx, gpuprobe_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = status_message(ctx, st, fmt, ap);
    va_end(ap);
    cli_err("%s", msg ? msg : gpuprobe_status_string(st));
    int rc = CLI_EXIT_FAIL;
    if (json_mode) {
        struct json_object *doc = cli_doc();
        cli_set(doc, "error", cli_error_obj(gpuprobe_status_name(st),
                                            msg ? msg : gpuprobe_status_string(st)));
        rc = cli_print_doc(doc);
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_FAIL;
    }
    free(msg);
    return rc;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vformat(fmt, ap);
    va_end(ap);
    cli_err("%s", msg ? msg : "usage error");
    fprintf(stderr, "Try '%s --help' for more information.\n", cli_prog());
    if (json_mode) {
        struct json_object *doc = cli_doc();
        cli_set(doc, "error", cli_error_obj("usage", msg ? msg : "usage error"));
        cli_print_doc(doc);
    }
    free(msg);
    return CLI_EXIT_USAGE;
}

/* ---- human-readable figures -------------------------------------------------- */

static void scaled(char *buf, size_t size, uint64_t v, const char *const *unit,
                   size_t units, const char *plain_suffix)
{
    double x = (double)v;
    size_t u = 0;
    while (x >= 1000.0 && u + 1 < units) {
        x /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu%s", (unsigned long long)v, plain_suffix);
    else
        snprintf(buf, size, "%.1f %s", x, unit[u]);
}

void cli_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    scaled(buf, size, bytes, unit, sizeof unit / sizeof unit[0], " B");
}

void cli_count(char *buf, size_t size, uint64_t count)
{
    static const char *const unit[] = {"", "K", "M", "B", "T", "Q"};
    scaled(buf, size, count, unit, sizeof unit / sizeof unit[0], "");
}

void cli_cuda_version(char *buf, size_t size, int version)
{
    if (version <= 0)
        snprintf(buf, size, "unknown");
    else
        snprintf(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
}

void cli_seconds(char *buf, size_t size, double s)
{
    if (s >= 0.1 || !(s > 0))
        snprintf(buf, size, "%.3fs", s > 0 ? s : 0.0);
    else if (s >= 1e-4)
        snprintf(buf, size, "%.3f ms", s * 1e3);
    else
        snprintf(buf, size, "%.1f us", s * 1e6);
}

void cli_runs(char *buf, size_t size, const gpuprobe_matmul_result *r)
{
    int64_t runs = 0, batch = 0;
    gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_RUNS, &runs);
    gpuprobe_matmul_result_get_int(r, GPUPROBE_METRIC_BATCH, &batch);
    if (batch > 1)
        snprintf(buf, size, "median of %lld runs of %lld calls", (long long)runs,
                 (long long)batch);
    else
        snprintf(buf, size, "median of %lld run%s", (long long)runs, runs == 1 ? "" : "s");
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
