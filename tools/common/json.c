/*
 * json.c - JSON documents through json-c: UTF-8-clean strings, numbers that
 * read back exactly, null for what is not finite, the one error shape, and
 * allocation failures reported instead of printed as holes.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "json.h"

#include "text.h"

#include "gpuprobe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

static int json_mode; /* --json was given */
static int json_oom;  /* an allocation failed while building */

int cli_json(void)
{
    return json_mode;
}

void cli_set_json(int on)
{
    json_mode = on != 0;
}

/* v is NULL only when its constructor ran out of memory. */
static struct json_object *checked(struct json_object *v)
{
    if (!v)
        json_oom = 1;
    return v;
}

struct json_object *cli_obj(void)
{
    return checked(json_object_new_object());
}

struct json_object *cli_arr(void)
{
    return checked(json_object_new_array());
}

struct json_object *cli_doc(void)
{
    struct json_object *doc = cli_obj();
    cli_set_i64(doc, "schema", CLI_JSON_SCHEMA);
    cli_set_str(doc, "command", cli_prog());
    cli_set_str(doc, "library_version", gpuprobe_version_string());
    return doc;
}

/* Add key: v (NULL means JSON null here: callers check their constructors
 * through checked() first). */
static void add(struct json_object *o, const char *key, struct json_object *v)
{
    if (!o) {
        json_object_put(v);
        return;
    }
    if (json_object_object_add(o, key, v) != 0) {
        json_oom = 1;
        json_object_put(v);
    }
}

void cli_set(struct json_object *o, const char *key, struct json_object *v)
{
    if (!v) {
        json_oom = 1; /* a failed cli_obj() / cli_arr() / ... */
        return;
    }
    add(o, key, v);
}

void cli_set_null(struct json_object *o, const char *key)
{
    add(o, key, NULL);
}

struct json_object *cli_string(const char *s)
{
    char *clean = cli_utf8_clean(s);
    if (!clean) {
        json_oom = 1;
        return NULL;
    }
    struct json_object *v = checked(json_object_new_string(clean));
    free(clean);
    return v;
}

void cli_set_str(struct json_object *o, const char *key, const char *s)
{
    if (!s)
        cli_set_null(o, key);
    else
        cli_set(o, key, cli_string(s));
}

void cli_set_i64(struct json_object *o, const char *key, int64_t v)
{
    cli_set(o, key, checked(json_object_new_int64(v)));
}

void cli_set_u64(struct json_object *o, const char *key, uint64_t v)
{
    cli_set(o, key, checked(json_object_new_uint64(v)));
}

void cli_set_bool(struct json_object *o, const char *key, int v)
{
    cli_set(o, key, checked(json_object_new_boolean(v != 0)));
}

void cli_set_num(struct json_object *o, const char *key, double v)
{
    if (!isfinite(v)) {
        cli_set_null(o, key);
        return;
    }
    /* The shortest of %.15g..%.17g that reads back as v: 0.1, not
     * 0.10000000000000001. */
    char text[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    cli_set(o, key, checked(json_object_new_double_s(v, text)));
}

void cli_push(struct json_object *arr, struct json_object *v)
{
    if (!v) {
        json_oom = 1;
        return;
    }
    if (!arr || json_object_array_add(arr, v) != 0) {
        json_oom |= arr != NULL;
        json_object_put(v);
    }
}

struct json_object *cli_error_obj(const char *status, const char *message)
{
    struct json_object *e = cli_obj();
    cli_set_str(e, "status", status);
    cli_set_str(e, "message", message);
    return e;
}

int cli_print_doc(struct json_object *doc)
{
    const char *text = NULL;
    if (doc && !json_oom)
        text = json_object_to_json_string_ext(
            doc, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = CLI_EXIT_OK;
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
    } else {
        cli_err("out of memory while writing the JSON document");
        rc = CLI_EXIT_FAIL;
    }
    json_object_put(doc);
    json_oom = 0;
    return rc;
}
