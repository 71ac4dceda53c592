/*
 * json.h - JSON documents through json-c, above text.h: whether the
 * program answers in JSON (--json), builders whose strings are valid UTF-8
 * and whose numbers read back exactly, the one error shape, and printing
 * a document on one line.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_JSON_H
#define GPUPROBE_CLI_JSON_H

#include <stdint.h>

struct json_object;

/* The "schema" number at the top of every JSON document (docs/json.md).
 * Grows when a member changes meaning or goes away; new members do not
 * change it. */
#define CLI_JSON_SCHEMA 2

/* 1 when the program answers in JSON (set from --json by cli_start()). */
int cli_json(void);
void cli_set_json(int on);

/* Builders. A NULL object stands for an allocation that failed: setters
 * ignore it, and cli_print_doc() then reports "out of memory" instead of
 * printing a document with holes. */
/* {"schema": 2, "command": "<prog>", "library_version": "1.2.0"} */
struct json_object *cli_doc(void);
struct json_object *cli_obj(void);
struct json_object *cli_arr(void);
/* Strings: invalid UTF-8 replaced by U+FFFD; NULL s writes null. */
void cli_set_str(struct json_object *o, const char *key, const char *s);
void cli_set_i64(struct json_object *o, const char *key, int64_t v);
void cli_set_u64(struct json_object *o, const char *key, uint64_t v);
/* Shortest text that reads back as v; NaN and infinities write null. */
void cli_set_num(struct json_object *o, const char *key, double v);
void cli_set_bool(struct json_object *o, const char *key, int v);
void cli_set_null(struct json_object *o, const char *key);
/* A string value, as cli_set_str() writes it (for arrays). */
struct json_object *cli_string(const char *s);
/* Takes ownership of v (an object from cli_obj(), cli_arr(), ...). */
void cli_set(struct json_object *o, const char *key, struct json_object *v);
void cli_push(struct json_object *arr, struct json_object *v);
/* {"status": status, "message": message}: the one error shape. */
struct json_object *cli_error_obj(const char *status, const char *message);

/* Print doc on one line, then free it. Returns CLI_EXIT_OK, or
 * CLI_EXIT_FAIL after reporting an allocation failure. */
int cli_print_doc(struct json_object *doc);

#endif
