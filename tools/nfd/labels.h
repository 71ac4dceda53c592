/*
 * labels.h - the syntax of Kubernetes node labels, and a way to turn any
 * text into a valid label value.
 *
 * The rules are those the Kubernetes API server applies (apimachinery's
 * validation of qualified names and label values; "Syntax and character
 * set" in the Kubernetes documentation on labels):
 *
 *   key    [prefix "/"] name
 *   prefix a DNS subdomain: at most 253 characters; dot-separated parts of
 *          lower-case letters, digits and '-', each part starting and ending
 *          with a letter or digit (the API server does not limit a part to
 *          63 characters, so neither does this)
 *   name   1 to 63 characters of [A-Za-z0-9._-], starting and ending with a
 *          letter or digit
 *   value  empty, or as a name: at most 63 characters of [A-Za-z0-9._-],
 *          starting and ending with a letter or digit
 *
 * Pure functions of their arguments: no allocation, no global state.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_NFD_LABELS_H
#define GPUPROBE_NFD_LABELS_H

#include <stddef.h>

#define LABEL_PREFIX_MAX 253
#define LABEL_NAME_MAX 63
#define LABEL_VALUE_MAX 63
/* A whole key: prefix, '/', name. */
#define LABEL_KEY_MAX (LABEL_PREFIX_MAX + 1 + LABEL_NAME_MAX)

/* NULL when the text is valid; otherwise why not, in words (a static
 * string). */
const char *label_key_error(const char *key);
const char *label_prefix_error(const char *prefix);
const char *label_value_error(const char *value);

/*
 * A valid label value made from the len bytes at src (any bytes), written
 * to dst (LABEL_VALUE_MAX + 1 bytes, NUL-terminated); returns its length.
 *
 *  - Letters, digits, '.', '_' and '-' are kept. Every run of other bytes
 *    (blanks, '/', control bytes, each byte of a non-ASCII character),
 *    with any '-' beside it, becomes one '-'.
 *  - What does not start and end with a letter or digit is trimmed.
 *  - A result longer than 63 characters keeps its first 54 (trimmed again)
 *    and ends with '-' and 8 hexadecimal digits of a hash (32-bit FNV-1a)
 *    of all the original bytes, so that two long names that differ only
 *    beyond the cut stay apart.
 *  - When no letter or digit is left (an empty name, or one written only
 *    in non-ASCII characters), the value is those 8 hexadecimal digits.
 *
 * A value that is already valid and not empty comes back unchanged. The
 * result is never empty and always passes label_value_error().
 */
size_t label_value_from(char *dst, const char *src, size_t len);

#endif
