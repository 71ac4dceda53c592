/*
 * test_model_config.c - the examples' config.json reader: the shipped
 * configs (examples/models/) give the published parameter counts, and bad
 * configs each give one clear error and no model.
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

#include "gpuprobe.h"
#include "model_config.h"

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
    gpuprobe_model *m = NULL;
    gpuprobe_status st = ex_model_config_load(path, &m, err, sizeof err);
    if (st != GPUPROBE_OK)
        fail_msg("%s: %s", file, err);
    assert_string_equal(err, "");
    return m;
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
    return ex_model_config_parse(text, strlen(text), m, err, n);
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
    gpuprobe_model *m = NULL;
    assert_int_equal(ex_model_config_parse(base, strlen(base), &m, err, sizeof err),
                     GPUPROBE_OK);
    assert_non_null(m);
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
        gpuprobe_model *m = (gpuprobe_model *)&err;
        gpuprobe_status st = ex_model_config_parse(rows[i].text, strlen(rows[i].text),
                                                   &m, err, sizeof err);
        if (st != GPUPROBE_ERR_INVALID_ARGUMENT || m || !strstr(err, rows[i].part))
            fail_msg("row %zu (%s): %s, \"%s\"", i, rows[i].text,
                     gpuprobe_status_name(st), err);
    }
    /* a NUL byte inside the text */
    char err[512];
    gpuprobe_model *m = NULL;
    assert_int_equal(ex_model_config_parse("{}\0{}", 5, &m, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "NUL byte at byte 2"));
    assert_null(m);
    /* NULL arguments */
    assert_int_equal(ex_model_config_parse(NULL, 0, &m, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(ex_model_config_parse(base, strlen(base), NULL, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* no room for a message is fine too */
    assert_int_equal(ex_model_config_parse("[]", 2, &m, NULL, 0),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    /* files: missing, too large, a directory */
    assert_int_equal(ex_model_config_load("/nonexistent/config.json", &m, err, sizeof err),
                     GPUPROBE_ERR_SYSTEM);
    assert_non_null(strstr(err, "/nonexistent/config.json: No such file"));
    assert_null(m);
    char big[256];
    snprintf(big, sizeof big, "%s/gpuprobe-big-config-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(big);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (unsigned i = 0; i <= EX_MODEL_CONFIG_MAX_BYTES; i++)
        fputc(' ', f);
    fclose(f);
    assert_int_equal(ex_model_config_load(big, &m, err, sizeof err),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "larger than any model config"));
    remove(big);
    assert_int_equal(ex_model_config_load(models_dir, &m, err, sizeof err),
                     GPUPROBE_ERR_SYSTEM);
    assert_null(m);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
        return 2;
    }
    models_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_configs),
        cmocka_unit_test(test_base_is_valid),
        cmocka_unit_test(test_missing_fields),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_malformed_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
