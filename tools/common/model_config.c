/*
 * model_config.c - a Hugging Face config.json into a gpuprobe_model, with
 * its torch_dtype and max_position_embeddings (model.h). Strict JSON
 * (json-c's strict mode: no trailing commas or comments, nothing after the
 * object), integers only where the library takes integers, every value
 * checked against the library's bounds before it is set, and the whole
 * model checked by the library at the end, so that a bad config gives one
 * clear message and no model.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* Nesting deeper than this is not a model config. */
#define CONFIG_DEPTH 16

static gpuprobe_status fail(char *err, size_t errsize, gpuprobe_status st,
                            const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static gpuprobe_status fail(char *err, size_t errsize, gpuprobe_status st,
                            const char *fmt, ...)
{
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return st;
}

static const char *type_name(json_type t)
{
    switch (t) {
    case json_type_null: return "null";
    case json_type_boolean: return "a boolean";
    case json_type_double: return "a floating-point number";
    case json_type_int: return "an integer";
    case json_type_object: return "an object";
    case json_type_array: return "an array";
    case json_type_string: return "a string";
    }
    return "unknown";
}

/* The member `key`, or NULL when absent or null. */
static json_object *member(json_object *obj, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    return v;
}

typedef struct reader {
    json_object *obj, *root; /* the language model's keys; the whole config */
    gpuprobe_model *model;
    cli_model_config *out;
    char *err;
    size_t errsize;
} reader;

/* Set param from integer member key (absent or null: left unset, or an
 * error when required). Zero, negative and out-of-range values are
 * refused with the library's bounds. */
static gpuprobe_status take_int(reader *r, const char *key,
                                gpuprobe_model_param param, int required)
{
    json_object *v = member(r->obj, key);
    if (!v)
        return required ? fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                               "missing \"%s\"", key)
                        : GPUPROBE_OK;
    if (!json_object_is_type(v, json_type_int))
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" must be an integer, not %s", key,
                    type_name(json_object_get_type(v)));
    int64_t x = json_object_get_int64(v);
    int64_t lo = 0, hi = 0;
    gpuprobe_model_param_bounds(param, &lo, &hi);
    if (x < lo)
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" is %" PRId64 ": must be at least %" PRId64, key, x, lo);
    if (x > hi) /* json-c saturates what 64 bits cannot hold */
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" is %s: out of range (%" PRId64 " to %" PRId64 ")", key,
                    x == INT64_MAX ? "beyond 64 bits" : json_object_get_string(v),
                    lo, hi);
    return gpuprobe_model_set(r->model, param, x);
}

/* A boolean member: *value unchanged when absent or null. */
static gpuprobe_status take_bool(reader *r, const char *key, int *value)
{
    json_object *v = member(r->obj, key);
    if (!v)
        return GPUPROBE_OK;
    if (!json_object_is_type(v, json_type_boolean))
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" must be true or false, not %s", key,
                    type_name(json_object_get_type(v)));
    *value = json_object_get_boolean(v) ? 1 : 0;
    return GPUPROBE_OK;
}

int cli_torch_dtype(const char *name, gpuprobe_dtype *out)
{
    static const struct {
        const char *name;
        gpuprobe_dtype dtype;
    } names[] = {
        {"float32", GPUPROBE_DTYPE_FP32}, {"float", GPUPROBE_DTYPE_FP32},
        {"fp32", GPUPROBE_DTYPE_FP32},    {"float64", GPUPROBE_DTYPE_FP64},
        {"double", GPUPROBE_DTYPE_FP64},  {"float16", GPUPROBE_DTYPE_FP16},
        {"half", GPUPROBE_DTYPE_FP16},    {"fp16", GPUPROBE_DTYPE_FP16},
        {"bfloat16", GPUPROBE_DTYPE_BF16}, {"bf16", GPUPROBE_DTYPE_BF16},
        {"int8", GPUPROBE_DTYPE_INT8},
    };
    if (!name)
        return -1;
    if (strncmp(name, "torch.", 6) == 0)
        name += 6;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].dtype;
            return 0;
        }
    }
    if (strncmp(name, "float8_", 7) == 0) { /* float8_e4m3fn, float8_e5m2, ... */
        *out = GPUPROBE_DTYPE_FP8;
        return 0;
    }
    return -1;
}

/* torch_dtype (or dtype, as newer configs call it), at the top level or
 * beside the language model's keys: a string, or absent. */
static gpuprobe_status take_dtype(reader *r)
{
    static const char *const keys[] = {"torch_dtype", "dtype"};
    json_object *v = NULL;
    const char *key = keys[0];
    for (size_t i = 0; !v && i < 2; i++) {
        key = keys[i];
        v = member(r->obj, key);
        if (!v)
            v = member(r->root, key);
    }
    if (!v)
        return GPUPROBE_OK;
    if (!json_object_is_type(v, json_type_string))
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" must be a string, not %s", key, type_name(json_object_get_type(v)));
    const char *text = json_object_get_string(v);
    snprintf(r->out->torch_dtype, sizeof r->out->torch_dtype, "%s", text);
    r->out->have_dtype = cli_torch_dtype(text, &r->out->dtype) == 0;
    return GPUPROBE_OK;
}

/* max_position_embeddings: absent, or a context the library takes. */
static gpuprobe_status take_positions(reader *r)
{
    static const char key[] = "max_position_embeddings";
    json_object *v = member(r->obj, key);
    if (!v)
        return GPUPROBE_OK;
    int64_t lo = 0, hi = 0;
    gpuprobe_plan_param_bounds(GPUPROBE_PLAN_CONTEXT, &lo, &hi);
    if (!json_object_is_type(v, json_type_int))
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" must be an integer, not %s", key, type_name(json_object_get_type(v)));
    int64_t x = json_object_get_int64(v);
    if (x < 1 || x > hi)
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "\"%s\" is %s: out of range (1 to %" PRId64 ")", key,
                    x == INT64_MAX ? "beyond 64 bits" : json_object_get_string(v), hi);
    r->out->max_positions = (uint64_t)x;
    return GPUPROBE_OK;
}

static gpuprobe_status read_model(reader *r)
{
    gpuprobe_status st;
#define TAKE(call)                                                            \
    do {                                                                      \
        if ((st = (call)) != GPUPROBE_OK)                                     \
            return st;                                                        \
    } while (0)
    /* A multimodal config keeps the language model in "text_config". */
    json_object *text = member(r->obj, "text_config");
    if (!member(r->obj, "num_hidden_layers") && text &&
        json_object_is_type(text, json_type_object))
        r->obj = text;

    TAKE(take_int(r, "num_hidden_layers", GPUPROBE_MODEL_LAYERS, 1));
    TAKE(take_int(r, "hidden_size", GPUPROBE_MODEL_HIDDEN, 1));
    TAKE(take_int(r, "num_attention_heads", GPUPROBE_MODEL_HEADS, 1));
    TAKE(take_int(r, "num_key_value_heads", GPUPROBE_MODEL_KV_HEADS, 0));
    TAKE(take_int(r, "head_dim", GPUPROBE_MODEL_HEAD_DIM, 0));
    TAKE(take_int(r, "vocab_size", GPUPROBE_MODEL_VOCAB, 1));

    /* Experts: Mixtral's num_local_experts, Qwen-MoE's num_experts. */
    const char *experts = member(r->obj, "num_local_experts") ? "num_local_experts"
                                                              : "num_experts";
    TAKE(take_int(r, experts, GPUPROBE_MODEL_EXPERTS, 0));
    TAKE(take_int(r, "num_experts_per_tok", GPUPROBE_MODEL_EXPERTS_PER_TOKEN, 0));
    if (member(r->obj, "shared_expert_intermediate_size"))
        return fail(r->err, r->errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "shared experts (\"shared_expert_intermediate_size\") "
                    "are not described by this reader");
    /* The experts' size, where it differs from the dense MLP's. */
    int64_t e = 0;
    gpuprobe_model_get(r->model, GPUPROBE_MODEL_EXPERTS, &e);
    if (e > 1 && member(r->obj, "moe_intermediate_size"))
        TAKE(take_int(r, "moe_intermediate_size", GPUPROBE_MODEL_INTERMEDIATE, 1));
    else
        TAKE(take_int(r, "intermediate_size", GPUPROBE_MODEL_INTERMEDIATE, 1));

    int tied = 0, use_window = 1, bias = 0;
    TAKE(take_bool(r, "tie_word_embeddings", &tied));
    TAKE(gpuprobe_model_set(r->model, GPUPROBE_MODEL_TIED_EMBEDDINGS, tied));
    /* Qwen2 configs carry a window they do not use (use_sliding_window:
     * false); Mistral 7B v0.1's applies. */
    TAKE(take_bool(r, "use_sliding_window", &use_window));
    if (use_window)
        TAKE(take_int(r, "sliding_window", GPUPROBE_MODEL_SLIDING_WINDOW, 0));
    json_object *type = member(r->obj, "model_type");
    if (type && json_object_is_type(type, json_type_string) &&
        strcmp(json_object_get_string(type), "qwen2") == 0)
        bias = 1; /* Qwen2 always has q, k and v biases */
    TAKE(take_bool(r, "attention_bias", &bias));
    TAKE(gpuprobe_model_set(r->model, GPUPROBE_MODEL_QKV_BIAS, bias));
    TAKE(take_positions(r));
    TAKE(take_dtype(r));
#undef TAKE

    /* The library checks the whole: heads dividing the hidden size, KV
     * heads dividing the heads, experts per token, the 10^15 limit. */
    gpuprobe_context *ctx = NULL;
    if (gpuprobe_context_create(&ctx, 0) != GPUPROBE_OK)
        return fail(r->err, r->errsize, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory");
    gpuprobe_plan plan = GPUPROBE_PLAN_INIT;
    st = gpuprobe_plan_compute(ctx, r->model, NULL, 0, &plan);
    if (st != GPUPROBE_OK)
        fail(r->err, r->errsize, st, "%s", gpuprobe_last_error(ctx));
    gpuprobe_context_destroy(ctx);
    return st;
}

gpuprobe_status cli_model_parse(const char *text, size_t len, cli_model_config *out, char *err,
                                size_t errsize)
{
    if (err && errsize)
        err[0] = '\0';
    if (!out)
        return fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT, "no output");
    memset(out, 0, sizeof *out);
    if (!text)
        return fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT, "no text");
    if (len > CLI_MODEL_CONFIG_MAX_BYTES)
        return fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                    "%zu bytes: larger than any model config (%u bytes at most)",
                    len, CLI_MODEL_CONFIG_MAX_BYTES);
    /* json-c wants the terminating NUL to know the input ends. */
    char *copy = malloc(len + 1);
    json_tokener *tok = json_tokener_new_ex(CONFIG_DEPTH);
    if (!copy || !tok) {
        free(copy);
        if (tok)
            json_tokener_free(tok);
        return fail(err, errsize, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, copy, (int)len + 1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    gpuprobe_status st = GPUPROBE_OK;
    if (memchr(text, '\0', len))
        st = fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                  "malformed JSON: a NUL byte at byte %zu",
                  (size_t)((const char *)memchr(text, '\0', len) - text));
    else if (!root || jerr != json_tokener_success)
        st = fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                  "malformed JSON near byte %zu: %s", end,
                  json_tokener_error_desc(jerr));
    else if (!json_object_is_type(root, json_type_object))
        st = fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT,
                  "not a model config: the JSON text is %s, not an object",
                  type_name(json_object_get_type(root)));
    json_tokener_free(tok);
    free(copy);

    gpuprobe_model *model = NULL;
    if (st == GPUPROBE_OK && gpuprobe_model_create(&model) != GPUPROBE_OK)
        st = fail(err, errsize, GPUPROBE_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == GPUPROBE_OK) {
        reader r = {root, root, model, out, err, errsize};
        st = read_model(&r);
    }
    json_object_put(root);
    if (st != GPUPROBE_OK) {
        gpuprobe_model_destroy(model);
        memset(out, 0, sizeof *out);
        return st;
    }
    out->model = model;
    return GPUPROBE_OK;
}

void cli_model_config_free(cli_model_config *c)
{
    if (c) {
        gpuprobe_model_destroy(c->model);
        c->model = NULL;
    }
}

gpuprobe_status cli_model_load(const char *path, cli_model_config *out, char *err,
                               size_t errsize)
{
    if (err && errsize)
        err[0] = '\0';
    if (!out || !path)
        return fail(err, errsize, GPUPROBE_ERR_INVALID_ARGUMENT, "no path or output");
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errsize, GPUPROBE_ERR_SYSTEM, "%s: %s", path, strerror(errno));
    char *buf = malloc(CLI_MODEL_CONFIG_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return fail(err, errsize, GPUPROBE_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, CLI_MODEL_CONFIG_MAX_BYTES + 1, f);
    int bad = ferror(f);
    int saved = errno;
    fclose(f);
    gpuprobe_status st;
    char inner[512] = "";
    if (bad)
        st = fail(inner, sizeof inner, GPUPROBE_ERR_SYSTEM, "%s", strerror(saved));
    else if (n > CLI_MODEL_CONFIG_MAX_BYTES)
        st = fail(inner, sizeof inner, GPUPROBE_ERR_INVALID_ARGUMENT,
                  "larger than any model config (%u bytes at most)",
                  CLI_MODEL_CONFIG_MAX_BYTES);
    else
        st = cli_model_parse(buf, n, out, inner, sizeof inner);
    free(buf);
    if (st != GPUPROBE_OK)
        fail(err, errsize, st, "%s: %s", path, inner);
    return st;
}
