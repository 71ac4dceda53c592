/*
 * test_model_config.c - the commands' config.json reader and model
 * resolution (tools/common/model.h): the shipped configs
 * (examples/models/) give the published parameter counts, bad configs
 * each give one clear error and no model, and a model is found where the
 * rules say (a path, a directory, the Hugging Face hub cache, the shipped
 * configs) or not at all, with every place looked in.
 *
 * Usage: test_model_config MODELS_DIR
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "gpuprobe.h"
#include "model.h"

static const char *models_dir;

static gpuprobe_plan plan_of(const gpuprobe_model *m, const gpuprobe_plan_options *o)
{
    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    assert_int_equal(gpuprobe_plan_compute(NULL, m, o, 0, &p), GPUPROBE_OK);
    return p;
}

static gpuprobe_model *load(const char *file)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", models_dir, file);
    cli_model_config c;
    gpuprobe_status st = cli_model_load(path, &c, err, sizeof err);
    if (st != GPUPROBE_OK)
        fail_msg("%s: %s", file, err);
    assert_string_equal(err, "");
    return c.model;
}

static void test_shipped_configs(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        uint64_t params, active;
        double published, published_active;
        int64_t kv_per_token; /* bf16 */
    } rows[] = {
        {"Llama-3.1-8B.json", UINT64_C(8030261248), UINT64_C(8030261248), 8.03e9, 8.03e9, 131072},
        {"Llama-3.1-70B.json", UINT64_C(70553706496), UINT64_C(70553706496), 70.6e9, 70.6e9, 327680},
        {"Mistral-7B-v0.3.json", UINT64_C(7248023552), UINT64_C(7248023552), 7.25e9, 7.25e9, 131072},
        {"Qwen2.5-7B.json", UINT64_C(7615616512), UINT64_C(7615616512), 7.61e9, 7.61e9, 57344},
        {"Qwen2.5-0.5B.json", UINT64_C(494032768), UINT64_C(494032768), 0.494e9, 0.494e9, 12288},
        {"Mixtral-8x7B-v0.1.json", UINT64_C(46702792704), UINT64_C(12879925248), 46.7e9, 12.9e9, 131072},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gpuprobe_model *m = load(rows[i].file);
        gpuprobe_plan p = plan_of(m, NULL);
        if (p.params != rows[i].params || p.active_params != rows[i].active)
            fail_msg("%s: %llu / %llu parameters", rows[i].file,
                     (unsigned long long)p.params, (unsigned long long)p.active_params);
        double r = (double)p.params / rows[i].published;
        double ra = (double)p.active_params / rows[i].published_active;
        if (r < 0.995 || r > 1.005 || ra < 0.995 || ra > 1.005)
            fail_msg("%s: %.4f / %.4f of the published figures", rows[i].file, r, ra);
        assert_int_equal(p.kv_bytes_per_token, rows[i].kv_per_token);
        gpuprobe_model_destroy(m);
    }

    /* Qwen2.5 carries a window it does not use (use_sliding_window false) */
    gpuprobe_model *q = load("Qwen2.5-0.5B.json");
    int64_t w = -1, bias = 0, tied = 0;
    gpuprobe_model_get(q, GPUPROBE_MODEL_SLIDING_WINDOW, &w);
    gpuprobe_model_get(q, GPUPROBE_MODEL_QKV_BIAS, &bias);
    gpuprobe_model_get(q, GPUPROBE_MODEL_TIED_EMBEDDINGS, &tied);
    assert_int_equal(w, 0);
    assert_int_equal(bias, 1);
    assert_int_equal(tied, 1);
    gpuprobe_model_destroy(q);
    /* Mixtral: 8 experts, 2 per token; sliding_window null */
    gpuprobe_model *x = load("Mixtral-8x7B-v0.1.json");
    int64_t e = 0, k = 0;
    gpuprobe_model_get(x, GPUPROBE_MODEL_EXPERTS, &e);
    gpuprobe_model_get(x, GPUPROBE_MODEL_EXPERTS_PER_TOKEN, &k);
    gpuprobe_model_get(x, GPUPROBE_MODEL_SLIDING_WINDOW, &w);
    assert_int_equal(e, 8);
    assert_int_equal(k, 2);
    assert_int_equal(w, 0);
    gpuprobe_model_destroy(x);
}

/* A small valid config, with one edit applied by the tests below. */
static const char base[] =
    "{\"model_type\": \"mistral\", \"num_hidden_layers\": 32, "
    "\"hidden_size\": 4096, \"num_attention_heads\": 32, "
    "\"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
    "\"vocab_size\": 32000, \"sliding_window\": 4096, "
    "\"rope_scaling\": null, \"torch_dtype\": \"bfloat16\"}";

/* Replace the first `from` in base by `to` and parse. */
static gpuprobe_status parse_edit(const char *from, const char *to,
                                  gpuprobe_model **m, char *err, size_t n)
{
    char text[2048];
    const char *at = strstr(base, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, to,
             at + strlen(from));
    cli_model_config c;
    gpuprobe_status st = cli_model_parse(text, strlen(text), &c, err, n);
    *m = c.model;
    return st;
}

static void expect_error(const char *from, const char *to, gpuprobe_status st,
                         const char *part)
{
    char err[512];
    gpuprobe_model *m = (gpuprobe_model *)&err; /* must become NULL */
    gpuprobe_status got = parse_edit(from, to, &m, err, sizeof err);
    if (got != st || m != NULL || !strstr(err, part))
        fail_msg("%s -> %s: status %s, message \"%s\" (want \"%s\")", from, to,
                 gpuprobe_status_name(got), err, part);
    assert_null(strchr(err, '\n')); /* one line */
}

static void test_base_is_valid(void **state)
{
    (void)state;
    char err[512];
    cli_model_config c;
    assert_int_equal(cli_model_parse(base, strlen(base), &c, err, sizeof err), GPUPROBE_OK);
    gpuprobe_model *m = c.model;
    assert_non_null(m);
    /* torch_dtype read and mapped; no max_position_embeddings */
    assert_string_equal(c.torch_dtype, "bfloat16");
    assert_int_equal(c.have_dtype, 1);
    assert_int_equal(c.dtype, GPUPROBE_DTYPE_BF16);
    assert_true(c.max_positions == 0);
    /* Mistral 7B v0.1's window applies: 32k context, 4k of cache */
    gpuprobe_plan_options *o = NULL;
    assert_int_equal(gpuprobe_plan_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_plan_options_set(o, GPUPROBE_PLAN_CONTEXT, 32768), GPUPROBE_OK);
    gpuprobe_plan p = plan_of(m, o);
    assert_true(p.kv_cache_bytes == 4096 * p.kv_bytes_per_token);
    assert_true(p.flags & GPUPROBE_PLAN_WINDOWED);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
}

static void test_missing_fields(void **state)
{
    (void)state;
    expect_error("\"num_hidden_layers\": 32, ", "", GPUPROBE_ERR_INVALID_ARGUMENT,
                 "missing \"num_hidden_layers\"");
    expect_error("\"hidden_size\": 4096, ", "", GPUPROBE_ERR_INVALID_ARGUMENT,
                 "missing \"hidden_size\"");
    expect_error("\"num_attention_heads\": 32, ", "", GPUPROBE_ERR_INVALID_ARGUMENT,
                 "missing \"num_attention_heads\"");
    expect_error("\"intermediate_size\": 14336, ", "", GPUPROBE_ERR_INVALID_ARGUMENT,
                 "missing \"intermediate_size\"");
    expect_error("\"vocab_size\": 32000, ", "", GPUPROBE_ERR_INVALID_ARGUMENT,
                 "missing \"vocab_size\"");
    /* null is as good as missing for a required key */
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": null",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "missing \"hidden_size\"");
}

static void test_bad_values(void **state)
{
    (void)state;
    expect_error("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"num_hidden_layers\" is 0: must be at least 1");
    expect_error("\"num_key_value_heads\": 8", "\"num_key_value_heads\": -8",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"num_key_value_heads\" is -8: must be at least 1");
    expect_error("\"vocab_size\": 32000", "\"vocab_size\": -1",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"vocab_size\" is -1");
    expect_error("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 1000000000000",
                 GPUPROBE_ERR_INVALID_ARGUMENT,
                 "\"num_hidden_layers\" is 1000000000000: out of range (1 to 1048576)");
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": 99999999999999999999999",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"hidden_size\" is beyond 64 bits: out of range");
    expect_error("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 1e12",
                 GPUPROBE_ERR_INVALID_ARGUMENT,
                 "\"num_hidden_layers\" must be an integer, not a floating-point number");
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": \"4096\"",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"hidden_size\" must be an integer, not a string");
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": 4096.5",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "not a floating-point number");
    /* json-c reads NaN and Infinity as numbers: still not integers */
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": NaN",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "not a floating-point number");
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": true",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "not a boolean");
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": [4096]",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "not an array");
    expect_error("\"model_type\": \"mistral\", ", "\"tie_word_embeddings\": 1, ",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"tie_word_embeddings\" must be true or false");
    /* heads that do not divide the hidden size: the library's message */
    expect_error("\"hidden_size\": 4096", "\"hidden_size\": 4100",
                 GPUPROBE_ERR_INVALID_ARGUMENT,
                 "hidden size 4100 is not a multiple of the 32 attention heads");
    expect_error("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "5 KV heads do not divide 32");
    /* experts without a count per token; more per token than experts */
    expect_error("\"vocab_size\"", "\"num_local_experts\": 8, \"vocab_size\"",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "no experts per token");
    expect_error("\"vocab_size\"", "\"num_local_experts\": 2, \"num_experts_per_tok\": 3, \"vocab_size\"",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "only 2 experts");
    expect_error("\"vocab_size\"", "\"shared_expert_intermediate_size\": 5632, \"vocab_size\"",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "shared experts");
    /* sizes every bound allows whose product passes the 10^15 limit */
    expect_error("\"intermediate_size\": 14336", "\"intermediate_size\": 67108865",
                 GPUPROBE_ERR_INVALID_ARGUMENT,
                 "\"intermediate_size\" is 67108865: out of range (1 to 67108864)");
    /* (a repeated key replaces the first) */
    expect_error("\"vocab_size\": 32000",
                 "\"vocab_size\": 32000, \"num_hidden_layers\": 1048576, "
                 "\"intermediate_size\": 1000000",
                 GPUPROBE_ERR_OVERFLOW, "more than GPUPROBE_MAX_PARAMS");
}

static void test_malformed_json(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *part;
    } rows[] = {
        {"", "malformed JSON"},
        {"{", "malformed JSON near byte 1: unexpected end of data"},
        {"{\"num_hidden_layers\": 32,}", "malformed JSON"},     /* trailing comma */
        {"{\"num_hidden_layers\": 32", "unexpected end of data"},
        {"{\"a\": 1 /* comment */}", "malformed JSON"},
        {"{\"a\": 01}", "malformed JSON"},
        {"[1, 2, 3]", "not an object"},
        {"\"config\"", "not an object"},
        {"42", "not an object"},
        {"{} {}", "malformed JSON near byte 3"}, /* text after the object */
        {"{}x", "malformed JSON near byte 2"},
        {"{}", "missing \"num_hidden_layers\""},
        {"{\"a\": [[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]}", "malformed JSON"}, /* too deep */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char err[512] = "unset";
        cli_model_config c;
        c.model = (gpuprobe_model *)&err;
        gpuprobe_status st = cli_model_parse(rows[i].text, strlen(rows[i].text), &c, err,
                                             sizeof err);
        if (st != GPUPROBE_ERR_INVALID_ARGUMENT || c.model || !strstr(err, rows[i].part))
            fail_msg("row %zu (%s): %s, \"%s\"", i, rows[i].text,
                     gpuprobe_status_name(st), err);
    }
    /* a NUL byte inside the text */
    char err[512];
    cli_model_config m;
    assert_int_equal(cli_model_parse("{}\0{}", 5, &m, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "NUL byte at byte 2"));
    assert_null(m.model);
    /* NULL arguments */
    assert_int_equal(cli_model_parse(NULL, 0, &m, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(cli_model_parse(base, strlen(base), NULL, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* no room for a message is fine too */
    assert_int_equal(cli_model_parse("[]", 2, &m, NULL, 0),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* files: missing, too large, a directory */
    assert_int_equal(cli_model_load("/nonexistent/config.json", &m, err, sizeof err),
                     GPUPROBE_ERR_SYSTEM);
    assert_non_null(strstr(err, "/nonexistent/config.json: No such file"));
    assert_null(m.model);
    char big[256];
    snprintf(big, sizeof big, "%s/gpuprobe-big-config-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(big);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (unsigned i = 0; i <= CLI_MODEL_CONFIG_MAX_BYTES; i++)
        fputc(' ', f);
    fclose(f);
    assert_int_equal(cli_model_load(big, &m, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "larger than any model config"));
    remove(big);
    assert_int_equal(cli_model_load(models_dir, &m, err, sizeof err),
                     GPUPROBE_ERR_SYSTEM);
    assert_null(m.model);
}

/* ---- torch_dtype and max_position_embeddings ---- */

static void test_dtype_and_positions(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int ok;
        gpuprobe_dtype dtype;
    } names[] = {
        {"float32", 1, GPUPROBE_DTYPE_FP32}, {"float", 1, GPUPROBE_DTYPE_FP32},
        {"torch.float32", 1, GPUPROBE_DTYPE_FP32}, {"float64", 1, GPUPROBE_DTYPE_FP64},
        {"float16", 1, GPUPROBE_DTYPE_FP16}, {"half", 1, GPUPROBE_DTYPE_FP16},
        {"bfloat16", 1, GPUPROBE_DTYPE_BF16}, {"torch.bfloat16", 1, GPUPROBE_DTYPE_BF16},
        {"float8_e4m3fn", 1, GPUPROBE_DTYPE_FP8}, {"float8_e5m2", 1, GPUPROBE_DTYPE_FP8},
        {"int8", 1, GPUPROBE_DTYPE_INT8}, {"auto", 0, 0}, {"Float16", 0, 0}, {"", 0, 0},
        {"torch.", 0, 0}, {"uint8", 0, 0},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        gpuprobe_dtype d = (gpuprobe_dtype)99;
        int r = cli_torch_dtype(names[i].name, &d);
        if ((r == 0) != names[i].ok || (r == 0 && d != names[i].dtype))
            fail_msg("torch_dtype \"%s\": %d, %d", names[i].name, r, (int)d);
    }
    assert_int_equal(cli_torch_dtype(NULL, NULL), -1);

    char err[512];
    cli_model_config c;
    /* the newer key, "dtype"; an unknown name is kept, not an error */
    assert_int_equal(parse_edit("\"torch_dtype\": \"bfloat16\"", "\"dtype\": \"float16\"",
                                &c.model, err, sizeof err), GPUPROBE_OK);
    gpuprobe_model_destroy(c.model);
    static const char with_pos[] =
        "{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
        "\"intermediate_size\": 128, \"vocab_size\": 100, \"max_position_embeddings\": 2048, "
        "\"torch_dtype\": \"auto\"}";
    assert_int_equal(cli_model_parse(with_pos, strlen(with_pos), &c, err, sizeof err), GPUPROBE_OK);
    assert_true(c.max_positions == 2048);
    assert_string_equal(c.torch_dtype, "auto");
    assert_int_equal(c.have_dtype, 0);
    cli_model_config_free(&c);
    assert_null(c.model);
    cli_model_config_free(NULL);
    /* a multimodal config: both inside text_config, or torch_dtype outside */
    static const char nested[] =
        "{\"torch_dtype\": \"float32\", \"text_config\": {\"num_hidden_layers\": 2, "
        "\"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 128, "
        "\"vocab_size\": 100, \"max_position_embeddings\": 4096}}";
    assert_int_equal(cli_model_parse(nested, strlen(nested), &c, err, sizeof err), GPUPROBE_OK);
    assert_true(c.max_positions == 4096);
    assert_int_equal(c.dtype, GPUPROBE_DTYPE_FP32);
    cli_model_config_free(&c);

    expect_error("\"torch_dtype\": \"bfloat16\"", "\"torch_dtype\": 16",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"torch_dtype\" must be a string, not an integer");
    expect_error("\"rope_scaling\": null", "\"max_position_embeddings\": 0",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"max_position_embeddings\" is 0: out of range (1 to 4294967296)");
    expect_error("\"rope_scaling\": null", "\"max_position_embeddings\": 4294967297",
                 GPUPROBE_ERR_INVALID_ARGUMENT, "\"max_position_embeddings\" is 4294967297: out of range");
    expect_error("\"rope_scaling\": null", "\"max_position_embeddings\": 8192.0",
                 GPUPROBE_ERR_INVALID_ARGUMENT,
                 "\"max_position_embeddings\" must be an integer, not a floating-point number");

    /* the shipped configs: bf16, and their published context lengths */
    static const struct {
        const char *file;
        uint64_t positions;
    } shipped[] = {
        {"Llama-3.1-8B.json", 131072}, {"Llama-3.1-70B.json", 131072},
        {"Mistral-7B-v0.3.json", 32768}, {"Qwen2.5-7B.json", 131072},
        {"Qwen2.5-0.5B.json", 32768}, {"Mixtral-8x7B-v0.1.json", 32768},
    };
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", models_dir, shipped[i].file);
        assert_int_equal(cli_model_load(path, &c, err, sizeof err), GPUPROBE_OK);
        assert_int_equal(c.dtype, GPUPROBE_DTYPE_BF16);
        assert_true(c.max_positions == shipped[i].positions);
        cli_model_config_free(&c);
    }
}

/* ---- the workload options ---- */

static void test_workload_options(void **state)
{
    (void)state;
    cli_workload w = CLI_WORKLOAD_INIT;
    assert_int_equal(cli_workload_option(&w, "device", "cpu"), 1); /* not one of them */
    assert_int_equal(cli_workload_option(&w, "context", "0"), CLI_EXIT_USAGE);
    assert_int_equal(cli_workload_option(&w, "batch", "1e12"), CLI_EXIT_USAGE);
    assert_int_equal(cli_workload_option(&w, "batch", "16777217"), CLI_EXIT_USAGE);
    assert_int_equal(cli_workload_option(&w, "context", "4294967297"), CLI_EXIT_USAGE);
    assert_int_equal(cli_workload_option(&w, "kv-dtype", "fp9"), CLI_EXIT_USAGE);
    assert_int_equal(cli_workload_option(&w, "margin", "1GX"), CLI_EXIT_USAGE);
    assert_int_equal(cli_workload_option(&w, "workload", "serving"), CLI_EXIT_USAGE);
    assert_true(w.context == -1 && w.batch == -1 && w.kv_dtype == -1 && w.margin == -1);

    /* defaults: the config's dtype, its positions capped at 8192 */
    char path[4096], err[512];
    cli_model_config c;
    snprintf(path, sizeof path, "%s/Llama-3.1-8B.json", models_dir);
    assert_int_equal(cli_model_load(path, &c, err, sizeof err), GPUPROBE_OK);
    gpuprobe_plan_options *o = NULL;
    int64_t v = 0;
    assert_int_equal(cli_workload_options(&w, &c, &o), CLI_EXIT_OK);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_CONTEXT, &v);
    assert_int_equal(v, CLI_DEFAULT_CONTEXT);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, &v);
    assert_int_equal(v, GPUPROBE_DTYPE_BF16);
    assert_int_equal(cli_kv_dtype(o), GPUPROBE_DTYPE_BF16);
    gpuprobe_plan_options_destroy(o);
    /* given values win; a shorter model context is the default */
    c.max_positions = 2048;
    assert_int_equal(cli_workload_options(&w, &c, &o), CLI_EXIT_OK);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_CONTEXT, &v);
    assert_int_equal(v, 2048);
    gpuprobe_plan_options_destroy(o);
    assert_int_equal(cli_workload_option(&w, "context", "8e3"), CLI_EXIT_OK);
    assert_int_equal(cli_workload_option(&w, "batch", "16777216"), CLI_EXIT_OK);
    assert_int_equal(cli_workload_option(&w, "weights-dtype", "fp32"), CLI_EXIT_OK);
    assert_int_equal(cli_workload_option(&w, "margin", "512MiB"), CLI_EXIT_OK);
    assert_int_equal(cli_workload_options(&w, &c, &o), CLI_EXIT_OK);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_CONTEXT, &v);
    assert_int_equal(v, 8000);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_BATCH, &v);
    assert_int_equal(v, 16777216);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_MARGIN, &v);
    assert_int_equal(v, 512 << 20);
    assert_int_equal(cli_kv_dtype(o), GPUPROBE_DTYPE_FP32);
    gpuprobe_plan_options_destroy(o);
    /* int8 weights have no training rule: a usage error */
    assert_int_equal(cli_workload_option(&w, "weights-dtype", "int8"), CLI_EXIT_OK);
    assert_int_equal(cli_workload_option(&w, "workload", "training"), CLI_EXIT_OK);
    o = NULL;
    assert_int_equal(cli_workload_options(&w, &c, &o), CLI_EXIT_USAGE);
    assert_null(o);
    cli_model_config_free(&c);
}

/* ---- finding a model ---- */

static char scratch[256];

static void mkdirs(const char *rel)
{
    char path[1024], *p;
    snprintf(path, sizeof path, "%s/%s", scratch, rel);
    for (p = path + strlen(scratch) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static void put(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", scratch, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A config whose layer count tells which file was read. */
static void put_config(const char *rel, int layers)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"num_hidden_layers\": %d, \"hidden_size\": 64, \"num_attention_heads\": 4, "
             "\"intermediate_size\": 128, \"vocab_size\": 100}", layers);
    put(rel, text);
}

static int layers_of(const char *path)
{
    cli_model_config c;
    char err[512];
    if (cli_model_load(path, &c, err, sizeof err) != GPUPROBE_OK)
        fail_msg("%s: %s", path, err);
    int64_t l = 0;
    gpuprobe_model_get(c.model, GPUPROBE_MODEL_LAYERS, &l);
    cli_model_config_free(&c);
    return (int)l;
}

/* Find m; -1 when not found (the message in err). */
static int find(const char *m, cli_model_source *src, char *err, size_t n)
{
    cli_model_found f;
    if (cli_model_find(m, &f, err, n) != 0)
        return -1;
    if (src)
        *src = f.source;
    return layers_of(f.path);
}

static void setenv_rel(const char *var, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", scratch, rel);
    setenv(var, path, 1);
}

/* The hub cache as huggingface_hub writes it: blobs named by hash,
 * snapshots holding symbolic links to them, refs/main naming the snapshot
 * of the main branch. */
static void fabricate_hub(void)
{
    mkdirs("hub/models--org--Tiny/blobs");
    mkdirs("hub/models--org--Tiny/refs");
    mkdirs("hub/models--org--Tiny/snapshots/aaa111");
    mkdirs("hub/models--org--Tiny/snapshots/ccc333");
    mkdirs("hub/models--org--Tiny/snapshots/bbb222");
    put_config("hub/models--org--Tiny/blobs/5eed", 3);
    char link[1024];
    snprintf(link, sizeof link, "%s/hub/models--org--Tiny/snapshots/ccc333/config.json", scratch);
    assert_int_equal(symlink("../../blobs/5eed", link), 0);
    put_config("hub/models--org--Tiny/snapshots/aaa111/config.json", 1);
    put("hub/models--org--Tiny/refs/main", "ccc333\n");
    /* an id without an organisation; its only snapshot lacks a config */
    mkdirs("hub/models--solo/snapshots/ddd444");
    put("hub/models--solo/snapshots/ddd444/tokenizer.json", "{}");
    /* the same id in another cache, for the precedence of the variables */
    mkdirs("home/hub/models--org--Tiny/snapshots/eee555");
    put_config("home/hub/models--org--Tiny/snapshots/eee555/config.json", 5);
    mkdirs("user/.cache/huggingface/hub/models--org--Tiny/snapshots/fff666");
    put_config("user/.cache/huggingface/hub/models--org--Tiny/snapshots/fff666/config.json", 6);
}

static void test_find_hub(void **state)
{
    (void)state;
    char err[4096];
    cli_model_source src;
    fabricate_hub();
    setenv_rel("HF_HUB_CACHE", "hub");
    setenv_rel("HF_HOME", "home");
    setenv_rel("HOME", "user");
    /* refs/main's snapshot, through the symbolic link to its blob */
    assert_int_equal(find("org/Tiny", &src, err, sizeof err), 3);
    assert_int_equal(src, CLI_MODEL_HUB);
    /* refs/main names a snapshot without a config: the first other one
     * that has one, in name order (aaa111, not bbb222) */
    put("hub/models--org--Tiny/refs/main", "bbb222");
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 1);
    /* refs/main names nothing there, or is missing, or is nonsense */
    put("hub/models--org--Tiny/refs/main", "../../..\n");
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 1);
    char path[1024];
    snprintf(path, sizeof path, "%s/hub/models--org--Tiny/refs/main", scratch);
    unlink(path);
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 1);
    /* a dangling link is no config: ccc333 only had the link */
    snprintf(path, sizeof path, "%s/hub/models--org--Tiny/blobs/5eed", scratch);
    unlink(path);
    put("hub/models--org--Tiny/refs/main", "ccc333");
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 1);
    put_config("hub/models--org--Tiny/blobs/5eed", 3);
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 3);

    /* precedence: HF_HUB_CACHE, then HF_HOME/hub, then ~/.cache; an empty
     * variable is unset */
    setenv("HF_HUB_CACHE", "", 1);
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 5);
    unsetenv("HF_HUB_CACHE");
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 5);
    setenv("HF_HOME", "", 1);
    assert_int_equal(find("org/Tiny", NULL, err, sizeof err), 6);
    const char *from = NULL;
    char hub[1024];
    assert_int_equal(cli_hub_cache(hub, sizeof hub, &from), 0);
    assert_string_equal(from, "HOME");
    assert_non_null(strstr(hub, "/user/.cache/huggingface/hub"));

    /* not found: the message says where it looked */
    setenv_rel("HF_HUB_CACHE", "hub");
    assert_int_equal(find("org/Missing", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "model org/Missing not found: no file or directory org/Missing"));
    assert_non_null(strstr(err, "not in the Hugging Face hub cache ("));
    assert_non_null(strstr(err, "from HF_HUB_CACHE: no models--org--Missing/snapshots"));
    assert_non_null(strstr(err, "not a shipped config (their names have no '/')"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(find("solo", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "models--solo has no snapshot with a config.json (1 snapshots)"));
    assert_non_null(strstr(err, "no shipped config solo.json in "));
    assert_int_equal(find("a b", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a Hugging Face model id or a shipped config's name"));
    static const char *const not_ids[] = {"org/x/y", "-x", "x--y", "a/../b", "/", "x/", ".x"};
    for (size_t i = 0; i < sizeof not_ids / sizeof not_ids[0]; i++)
        if (find(not_ids[i], NULL, err, sizeof err) != -1 || !strstr(err, "not found"))
            fail_msg("%s: %s", not_ids[i], err);
    assert_int_equal(find("", NULL, err, sizeof err), -1);
}

static void test_find_paths_and_shipped(void **state)
{
    (void)state;
    char err[4096], path[1024];
    cli_model_source src;
    /* a file, a directory holding config.json, one holding none */
    mkdirs("local/model");
    put_config("local/model/config.json", 7);
    put_config("local/other.json", 8);
    mkdirs("local/empty");
    snprintf(path, sizeof path, "%s/local/model", scratch);
    assert_int_equal(find(path, &src, err, sizeof err), 7);
    assert_int_equal(src, CLI_MODEL_DIRECTORY);
    snprintf(path, sizeof path, "%s/local/other.json", scratch);
    assert_int_equal(find(path, &src, err, sizeof err), 8);
    assert_int_equal(src, CLI_MODEL_FILE);
    snprintf(path, sizeof path, "%s/local/empty", scratch);
    assert_int_equal(find(path, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "local/empty holds no readable config.json"));
    /* a path is tried first: a directory named like an id wins */
    assert_int_equal(chdir(scratch), 0);
    mkdirs("org");
    mkdirs("org/Tiny");
    put_config("org/Tiny/config.json", 9);
    setenv_rel("HF_HUB_CACHE", "hub");
    assert_int_equal(find("org/Tiny", &src, err, sizeof err), 9);
    assert_int_equal(src, CLI_MODEL_DIRECTORY);

    /* shipped: $GPUPROBE_MODELS_DIR first, then beside the executable
     * (<build>/tests/../share/gpuprobe/models: the build tree's copies) */
    mkdirs("models");
    put_config("models/Llama-3.1-8B.json", 10);
    put_config("models/Mine.json", 11);
    put("models/notes.txt", "not a config");
    unsetenv("GPUPROBE_MODELS_DIR");
    assert_int_equal(find("Llama-3.1-8B", &src, err, sizeof err), 32);
    assert_int_equal(src, CLI_MODEL_SHIPPED);
    assert_int_equal(find("Mine", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "no shipped config Mine.json in "));
    assert_non_null(strstr(err, "/share/gpuprobe/models (executable)"));
    assert_non_null(strstr(err, "; shipped: Llama-3.1-70B, Llama-3.1-8B, Mistral-7B-v0.3, "
                                "Mixtral-8x7B-v0.1, Qwen2.5-0.5B, Qwen2.5-7B"));
    char dirs[3][CLI_MODEL_PATH_MAX];
    const char *from[3];
    size_t n = cli_model_dirs(dirs, from, 3);
    assert_true(n >= 2);
    assert_string_equal(from[0], "executable");
    assert_string_equal(from[n - 1], "datadir");
    setenv("GPUPROBE_MODELS_DIR", "", 1); /* empty: unset */
    assert_int_equal(cli_model_dirs(dirs, from, 3), n);
    setenv_rel("GPUPROBE_MODELS_DIR", "models");
    assert_int_equal(cli_model_dirs(dirs, from, 3), n + 1);
    assert_string_equal(from[0], "GPUPROBE_MODELS_DIR");
    assert_int_equal(find("Llama-3.1-8B", NULL, err, sizeof err), 10);
    assert_int_equal(find("Mine", NULL, err, sizeof err), 11);
    assert_int_equal(find("Qwen2.5-0.5B", NULL, err, sizeof err), 24);
    /* the list: every name once, the first directory's file, sorted */
    cli_model_entry *list = NULL;
    long k = cli_model_list(&list);
    assert_int_equal(k, 7);
    assert_string_equal(list[0].name, "Llama-3.1-70B");
    assert_string_equal(list[1].name, "Llama-3.1-8B");
    assert_non_null(strstr(list[1].path, "/models/Llama-3.1-8B.json"));
    assert_string_equal(list[2].name, "Mine");
    assert_int_equal(layers_of(list[1].path), 10);
    free(list);
    unsetenv("GPUPROBE_MODELS_DIR");
}

static int remove_tree(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return system(cmd);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
        return 2;
    }
    models_dir = argv[1];
    snprintf(scratch, sizeof scratch, "%s/gpuprobe-models-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_configs),
        cmocka_unit_test(test_base_is_valid),
        cmocka_unit_test(test_missing_fields),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_dtype_and_positions),
        cmocka_unit_test(test_workload_options),
        cmocka_unit_test(test_find_hub),
        cmocka_unit_test(test_find_paths_and_shipped),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return remove_tree() == 0 ? rc : 1;
}
