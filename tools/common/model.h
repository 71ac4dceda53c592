/*
 * model.h - a model named on the command line, above values.h, report.h
 * and json.h, below start.h: where its config.json is (a path, a
 * directory, a Hugging Face model id in the local hub cache, the name of a
 * shipped config; never the network), and the config read into a
 * gpuprobe_model with json-c (the library takes numbers and reads no JSON),
 * with the two figures a plan's defaults come from (torch_dtype and
 * max_position_embeddings); the workload options the commands share
 * (--context, --batch, --weights-dtype, --kv-dtype, --workload, --margin).
 *
 * Resolution, in this order (docs/capacity.md, gpuprobe-fit(1)):
 *
 *   1. M names an existing file: that file; an existing directory: its
 *      config.json (none there: not found).
 *   2. M is a Hugging Face model id (NAME or ORG/NAME: letters, digits,
 *      '.', '_', '-', each part starting with a letter or digit, no "--"
 *      or "..", at most 96 bytes): in the hub cache, the directory
 *      $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
 *      (~ is $HOME, else the user's home directory from the password
 *      database; an empty variable counts as unset), the file
 *      models--ORG--NAME/snapshots/REV/config.json of the snapshot that
 *      refs/main names, else of the first other snapshot that has one, in
 *      byte order of their names.
 *   3. M is a NAME (no '/'): NAME.json among the shipped configs, searched
 *      in $GPUPROBE_MODELS_DIR (when set and not empty), then
 *      <the executable's directory>/../share/gpuprobe/models, then the
 *      data directory the build was configured with
 *      (<datadir>/gpuprobe/models).
 *
 * A model found nowhere is a message naming every place looked in.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_CLI_MODEL_H
#define GPUPROBE_CLI_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprobe.h"
#include "text.h"

/* ---- the config.json reader --------------------------------------------- */

/* Largest config file read: 1 MiB (real ones are about 1 KiB). */
#define CLI_MODEL_CONFIG_MAX_BYTES (1u << 20)

/* A config.json read. Keys read: num_hidden_layers, hidden_size,
 * num_attention_heads, intermediate_size, vocab_size (required);
 * num_key_value_heads, head_dim, tie_word_embeddings, num_local_experts (or
 * num_experts), num_experts_per_tok, moe_intermediate_size, sliding_window
 * with use_sliding_window, attention_bias, model_type ("qwen2": q, k, v
 * biases), max_position_embeddings, torch_dtype (or dtype, its newer name).
 * A multimodal config's "text_config" is read when the top level has no
 * layers. Every other key is ignored. */
typedef struct cli_model_config {
    gpuprobe_model *model;  /* the architecture; cli_model_config_free() */
    char torch_dtype[32];   /* as written ("bfloat16", cut), "" when absent */
    int have_dtype;         /* torch_dtype names a dtype (cli_torch_dtype()) */
    gpuprobe_dtype dtype;   /* that dtype */
    uint64_t max_positions; /* max_position_embeddings; 0 when absent */
} cli_model_config;

/*
 * Parse the JSON text [text, text + len) (it need not be NUL-terminated).
 * Strict JSON (no trailing commas or comments, nothing after the object),
 * integers where the library takes integers, every value checked against
 * the library's bounds before it is set, the whole model checked by the
 * library at the end. On success *out holds a model; on failure nothing
 * is allocated (out->model is NULL) and err holds one line saying what is
 * wrong ("\"num_hidden_layers\" is 0: must be at least 1"). Returns
 * GPUPROBE_OK, GPUPROBE_ERR_INVALID_ARGUMENT (not a model config, or NULL
 * arguments), GPUPROBE_ERR_OVERFLOW (sizes beyond the library's limits),
 * GPUPROBE_ERR_OUT_OF_MEMORY.
 */
gpuprobe_status cli_model_parse(const char *text, size_t len, cli_model_config *out, char *err,
                                size_t errsize);

/* Read and parse the file at path, as cli_model_parse(); messages start
 * with the path. A file that cannot be read is GPUPROBE_ERR_SYSTEM (with
 * the reason); one larger than CLI_MODEL_CONFIG_MAX_BYTES is
 * GPUPROBE_ERR_INVALID_ARGUMENT. */
gpuprobe_status cli_model_load(const char *path, cli_model_config *out, char *err,
                               size_t errsize);

/* Frees the model; c may be NULL. */
void cli_model_config_free(cli_model_config *c);

/* A torch_dtype value as the library's dtype: float32/float/fp32, float64/
 * double, float16/half/fp16, bfloat16/bf16, the float8 types (float8_e4m3fn,
 * float8_e5m2, ...), int8; "torch." in front is ignored. 0, or -1 for
 * anything else ("auto" among them). */
int cli_torch_dtype(const char *name, gpuprobe_dtype *out);

/* ---- finding a model ------------------------------------------------------ */

/* Longest path handled. */
#define CLI_MODEL_PATH_MAX 4096

typedef enum cli_model_source {
    CLI_MODEL_FILE = 0,      /* a path to a config file */
    CLI_MODEL_DIRECTORY = 1, /* a directory holding config.json */
    CLI_MODEL_HUB = 2,       /* a model id in the Hugging Face hub cache */
    CLI_MODEL_SHIPPED = 3    /* a shipped config */
} cli_model_source;

/* "file", "directory", "hub_cache", "shipped". */
const char *cli_model_source_name(cli_model_source source);

typedef struct cli_model_found {
    char path[CLI_MODEL_PATH_MAX]; /* the config.json to read */
    cli_model_source source;
} cli_model_found;

/* Where the model M is, by the rules above: 0, or -1 with err (one line)
 * naming every place looked in. */
int cli_model_find(const char *m, cli_model_found *out, char *err, size_t errsize);

/* The hub cache directory (rule 2) into buf; *from (if not NULL) says
 * which variable gave it: "HF_HUB_CACHE", "HF_HOME", "HOME" or "passwd".
 * 0, or -1 when there is none (no home directory at all). */
int cli_hub_cache(char *buf, size_t size, const char **from);

/* The directories shipped configs are searched in (rule 3), in order,
 * without repeats: up to 3, each CLI_MODEL_PATH_MAX bytes; *from[i] (if
 * from is not NULL) says where each came from: "GPUPROBE_MODELS_DIR",
 * "executable", "datadir". Returns how many. */
size_t cli_model_dirs(char dirs[][CLI_MODEL_PATH_MAX], const char **from, size_t max);

/* m found (cli_model_find()) and read (cli_model_load()), as a command
 * does it: CLI_EXIT_OK, or the exit status after reporting why not (a model
 * not found, a config that is not a model's: usage errors, with the JSON
 * statuses "not_found" and "invalid_argument"; out of memory: 1). */
int cli_model_open(const char *m, cli_model_found *found, cli_model_config *cfg);

typedef struct cli_model_entry {
    char name[256];                /* "Llama-3.1-8B" */
    char path[CLI_MODEL_PATH_MAX]; /* its file */
} cli_model_entry;

/* The shipped configs, by name (the first directory that has a name wins),
 * sorted; *out is malloc'd (free() it), NULL when there are none. Returns
 * how many, or -1 when out of memory. */
long cli_model_list(cli_model_entry **out);

/* ---- the workload options the commands share ------------------------------ */

/* The options, as cli_option entries (args.h) of the commands that take
 * them, so that each says the same. */
#define CLI_OPTION_CONTEXT                                                              \
    {"context", "N", "with --model: tokens per sequence (default: the model's maximum, " \
                     "at most 8192)", 0}
#define CLI_OPTION_BATCH {"batch", "N", "with --model: sequences at once (default 1)", 0}
#define CLI_OPTION_WEIGHTS_DTYPE                                                         \
    {"weights-dtype", "D", "with --model: the weights' dtype (default: the config's "   \
                           "torch_dtype, else bf16)", 0}
#define CLI_OPTION_KV_DTYPE \
    {"kv-dtype", "D", "with --model: the KV cache's dtype (default: the compute dtype)", 0}
#define CLI_OPTION_MARGIN \
    {"margin", "SIZE", "with --model: safety margin per device (default 1GiB)", 0}

/* What the command line says of the workload; 0 or -1: not given. */
typedef struct cli_workload {
    int64_t context, batch, weights_dtype, kv_dtype, workload, margin;
} cli_workload;
#define CLI_WORKLOAD_INIT {-1, -1, -1, -1, -1, -1}

/* The option name (without "--") and its value, if it is one of these:
 * context, batch, weights-dtype, kv-dtype, workload, margin. Returns 1 when
 * it is not one of them, CLI_EXIT_OK when taken, or a usage error's status
 * (reported: "--batch wants a count from 1 to 16777216, not '0'"). */
int cli_workload_option(cli_workload *w, const char *name, const char *value);

/* The context a plan uses when --context is not given: the model's
 * max_position_embeddings, at most this. */
#define CLI_DEFAULT_CONTEXT 8192

/* Plan options for the model of c under w: what w gives, else the
 * config's torch_dtype for the weights (bf16 when it names none) and
 * max_position_embeddings capped at CLI_DEFAULT_CONTEXT for the context
 * (CLI_DEFAULT_CONTEXT when absent); the library's defaults for the rest.
 * Returns CLI_EXIT_OK, or a usage error's status (no training rule for the
 * weights dtype), or CLI_EXIT_FAIL out of memory (reported). */
int cli_workload_options(const cli_workload *w, const cli_model_config *c,
                         gpuprobe_plan_options **out);

/* The KV cache's dtype in the plan of o: as set, else the library's
 * default (fp32 and fp64 weights: the same, else bf16). */
gpuprobe_dtype cli_kv_dtype(const gpuprobe_plan_options *o);

/* A plan's figures as a JSON object (the shape `plan` of docs/json.md):
 * weights_bytes, gradient_bytes, optimizer_bytes, kv_cache_bytes,
 * activation_bytes, overhead_bytes, overhead_source, margin_bytes,
 * total_bytes, kv_bytes_per_token, windowed. */
struct json_object *cli_plan_json(const gpuprobe_plan *p);

/* "none", "measured", "default", "context_held": a gpuprobe_reserve_source. */
const char *cli_reserve_name(uint32_t source);

#endif
