/*
 * util.c - the helpers every file uses: bounded string copies, the one
 * quoting rule for text from outside, the environment, and the context's
 * error message (gp_fail, gp_ok). Ground floor: calls nothing of the
 * library but the name tables (names.c). See docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void gp_strlcpy(char *dst, const char *src, size_t size)
{
    if (size == 0)
        return;
    size_t n = src ? strnlen(src, size - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

void gp_vsnprintf(char *dst, size_t size, const char *fmt, va_list ap)
{
    if (size == 0)
        return;
    if (vsnprintf(dst, size, fmt, ap) < 0)
        dst[0] = '\0';
}

void gp_snprintf(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gp_vsnprintf(dst, size, fmt, ap);
    va_end(ap);
}

void gp_appendf(char *dst, size_t size, const char *fmt, ...)
{
    size_t used = strnlen(dst, size);
    if (used == size) /* no terminator within size: not ours to touch */
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(dst + used, size - used, fmt, ap);
    va_end(ap);
    if (r < 0)
        dst[used] = '\0';
    else if ((size_t)r >= size - used && size >= 4) /* something was left out */
        memcpy(dst + size - 4, "...", 4);
}

void gp_quote(char *dst, size_t size, const char *text, size_t max)
{
    if (size == 0)
        return;
    if (!text) {
        gp_strlcpy(dst, "(null)", size);
        return;
    }
    const char *ellipsis = "...";
    size_t room = size - 1; /* for NUL */
    size_t i = 0, o = 0;
    int truncated = 0;
    for (; text[i] != '\0'; i++) {
        if (i >= max || o + 1 > room) {
            truncated = 1;
            break;
        }
        unsigned char c = (unsigned char)text[i];
        dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (truncated) {
        size_t el = strlen(ellipsis);
        if (o + el > room)
            o = room >= el ? room - el : 0;
        memcpy(dst + o, ellipsis, room >= el ? el : room);
        o += room >= el ? el : room;
    }
    dst[o] = '\0';
}

void gp_quote_inplace(char *text)
{
    gp_quote(text, strlen(text) + 1, text, SIZE_MAX);
}

const char *gp_getenv(const char *name)
{
#if defined(__GLIBC__) || defined(_GNU_SOURCE)
    return secure_getenv(name);
#else
    return getenv(name);
#endif
}

gpuprobe_status gp_fail(gpuprobe_context *ctx, gpuprobe_status status,
                        const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        gp_vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
        if (ctx->error[0] == '\0')
            gp_strlcpy(ctx->error, gpuprobe_status_string(status),
                       sizeof ctx->error);
        gp_quote_inplace(ctx->error);
    }
    return status;
}

gpuprobe_status gp_ok(gpuprobe_context *ctx)
{
    if (ctx)
        ctx->error[0] = '\0';
    return GPUPROBE_OK;
}

gpuprobe_status gp_check_size(gpuprobe_context *ctx, const char *fn, const char *arg,
                              size_t size, size_t min, const char *type)
{
    if (size >= min)
        return GPUPROBE_OK;
    /* The initialiser's name: "gpuprobe_plan" -> "GPUPROBE_PLAN_INIT". */
    char init[64];
    size_t n = strnlen(type, sizeof init - sizeof "_INIT");
    for (size_t i = 0; i < n; i++)
        init[i] = (char)toupper((unsigned char)type[i]);
    gp_strlcpy(init + n, "_INIT", sizeof init - n);
    return gp_fail(ctx, GPUPROBE_ERR_INVALID_ARGUMENT,
                   "%s: %s->size is %zu, less than the %zu bytes of %s (use %s)",
                   fn, arg, size, min, type, init);
}
