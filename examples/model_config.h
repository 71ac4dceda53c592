/*
 * model_config.h - read a Hugging Face config.json into a gpuprobe_model.
 * Example-side code (it uses json-c); the library itself takes numbers and
 * depends on no JSON library.
 *
 * Read keys: num_hidden_layers, hidden_size, num_attention_heads,
 * intermediate_size, vocab_size (required); num_key_value_heads, head_dim,
 * tie_word_embeddings, num_local_experts (or num_experts), num_experts_per_tok,
 * moe_intermediate_size, sliding_window with use_sliding_window,
 * attention_bias, model_type ("qwen2": q, k, v biases). A multimodal
 * config's "text_config" is read when the top level has no layers. Every
 * other key (rope_scaling, torch_dtype, ...) is ignored.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_MODEL_CONFIG_H
#define GPUPROBE_MODEL_CONFIG_H

#include <stddef.h>

#include "gpuprobe.h"

/* Largest config file read: 1 MiB (real ones are about 1 KiB). */
#define EX_MODEL_CONFIG_MAX_BYTES (1u << 20)

/*
 * Parse the JSON text [text, text + len) (it need not be NUL-terminated).
 * On success *out is a new model (free it with gpuprobe_model_destroy()),
 * checked by the library (heads dividing the hidden size and so on).
 * On failure *out is NULL, nothing is allocated, and err holds one line
 * saying what is wrong, e.g. "\"num_hidden_layers\" is 0: must be at
 * least 1". Returns GPUPROBE_OK, GPUPROBE_ERR_INVALID_ARGUMENT (a bad
 * config, or NULL arguments), GPUPROBE_ERR_OVERFLOW (sizes beyond the
 * library's limits), GPUPROBE_ERR_OUT_OF_MEMORY.
 */
gpuprobe_status ex_model_config_parse(const char *text, size_t len,
                                      gpuprobe_model **out, char *err,
                                      size_t errsize);

/*
 * Read and parse the file at path, as ex_model_config_parse(); messages
 * start with the path. A file that cannot be read is GPUPROBE_ERR_SYSTEM
 * (with the reason); one larger than EX_MODEL_CONFIG_MAX_BYTES is
 * GPUPROBE_ERR_INVALID_ARGUMENT.
 */
gpuprobe_status ex_model_config_load(const char *path, gpuprobe_model **out,
                                     char *err, size_t errsize);

#endif
