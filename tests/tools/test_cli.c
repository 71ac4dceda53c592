/*
 * test_cli.c - unit tests of the helper library of the commands and
 * examples (tools/common): the quoting rule, UTF-8 repair, JSON values, the
 * values the programs parse, and the command line.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cli.h"

/* Quote s and compare with want; also check the returned length and that a
 * short buffer is cut, NUL-terminated, and still reports the full length. */
static void check_quote(const char *s, size_t len, const char *want)
{
    char buf[256];
    size_t n = cli_quote(buf, sizeof buf, s, len);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
    char small[4];
    assert_int_equal(cli_quote(small, sizeof small, s, len), strlen(want));
    assert_int_equal(strlen(small), strlen(want) < 3 ? strlen(want) : 3);
    assert_int_equal(cli_quote(NULL, 0, s, len), strlen(want));
}

static void quote_plain_text_is_unchanged(void **state)
{
    (void)state;
    check_quote("NVIDIA H200 \"SXM\" 141 GB", 24, "NVIDIA H200 \"SXM\" 141 GB");
    check_quote("", 0, "");
    /* Valid UTF-8 beyond ASCII is text: a registered sign, CJK, an emoji. */
    check_quote("Tesla\xc2\xae \xe4\xb8\xad \xf0\x9f\x9a\x80", 16, "Tesla\xc2\xae \xe4\xb8\xad \xf0\x9f\x9a\x80");
}

static void quote_escapes_controls_and_backslash(void **state)
{
    (void)state;
    check_quote("a\\b", 3, "a\\\\b");
    check_quote("t\tn\nr\r", 6, "t\\tn\\nr\\r");
    check_quote("\x1b[31mred\x1b[0m", 12, "\\x1b[31mred\\x1b[0m");
    check_quote("\x01\x7f", 2, "\\x01\\x7f");
    /* A NUL inside the given length is a byte like any other. */
    check_quote("a\0b", 3, "a\\x00b");
    /* C1 controls (U+0080-U+009F; U+009B is CSI on some terminals). */
    check_quote("x\xc2\x9b" "1m", 5, "x\\xc2\\x9b1m");
    check_quote("\xc2\xa0", 2, "\xc2\xa0"); /* U+00A0 is not a control */
}

static void quote_escapes_invalid_utf8(void **state)
{
    (void)state;
    check_quote("\xff", 1, "\\xff");
    check_quote("\xc0\x80", 2, "\\xc0\\x80");         /* overlong NUL */
    check_quote("\xe0\x80\xaf", 3, "\\xe0\\x80\\xaf"); /* overlong '/' */
    check_quote("\xed\xa0\x80", 3, "\\xed\\xa0\\x80"); /* a surrogate */
    check_quote("\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
    check_quote("ok\xe2\x82", 4, "ok\\xe2\\x82");      /* cut short at the end */
    check_quote("\xe2\x82" "A", 3, "\\xe2\\x82" "A");  /* cut short before ASCII */
    check_quote("\x80", 1, "\\x80");                   /* a lone continuation */
}

static void utf8_clean_replaces_each_bad_byte(void **state)
{
    (void)state;
    char *s = cli_utf8_clean("a\xff" "b\xe2\x82\xac\xc0\x80");
    assert_non_null(s);
    assert_string_equal(s, "a\xef\xbf\xbd" "b\xe2\x82\xac\xef\xbf\xbd\xef\xbf\xbd");
    free(s);
    s = cli_utf8_clean("\x1b[31m \"q\"");
    assert_string_equal(s, "\x1b[31m \"q\""); /* controls are JSON's to escape */
    free(s);
}

/* Serialize one member the way cli_print_doc() does. */
static const char *member_text(struct json_object *o)
{
    return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void json_strings_are_escaped_and_valid(void **state)
{
    (void)state;
    struct json_object *o = cli_obj();
    cli_set_str(o, "s", "q\"\\/\x1b[1m\n\xff");
    cli_set_str(o, "n", NULL);
    assert_string_equal(member_text(o), "{\"s\":\"q\\\"\\\\/\\u001b[1m\\n\xef\xbf\xbd\",\"n\":null}");
    json_object_put(o);
}

static void json_numbers(void **state)
{
    (void)state;
    struct json_object *o = cli_obj();
    cli_set_num(o, "a", 0.1);
    cli_set_num(o, "b", 1.0 / 3.0);
    cli_set_num(o, "nan", 0.0 / 0.0);
    cli_set_num(o, "inf", 1.0 / 0.0);
    cli_set_u64(o, "u", UINT64_MAX);
    cli_set_i64(o, "i", INT64_MIN);
    cli_set_bool(o, "t", 7);
    assert_string_equal(member_text(o), "{\"a\":0.1,\"b\":0.3333333333333333,\"nan\":null,\"inf\":null,"
                                        "\"u\":18446744073709551615,\"i\":-9223372036854775808,\"t\":true}");
    json_object_put(o);
}

static void json_b_reads_back(void **state)
{
    (void)state;
    /* 1/3 needs 16 digits to read back exactly; 0.1 only 1. */
    struct json_object *o = cli_obj();
    double third = 1.0 / 3.0;
    cli_set_num(o, "b", third);
    struct json_object *b = NULL;
    assert_true(json_object_object_get_ex(o, "b", &b));
    assert_true(strtod(json_object_to_json_string(b), NULL) == third);
    json_object_put(o);
}

static void error_object_has_the_one_shape(void **state)
{
    (void)state;
    struct json_object *e = cli_error_obj("usage", "bad \x01");
    assert_string_equal(member_text(e), "{\"status\":\"usage\",\"message\":\"bad \\u0001\"}");
    json_object_put(e);
}

static void parse_count(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(cli_parse_count("7e9", GPUPROBE_MAX_PARAMS, &v), 0);
    assert_true(v == UINT64_C(7000000000));
    assert_int_equal(cli_parse_count("1.5e10", UINT64_MAX, &v), 0);
    assert_true(v == UINT64_C(15000000000));
    assert_int_equal(cli_parse_count("1000000000000000", GPUPROBE_MAX_PARAMS, &v), 0);
    v = 42;
    static const char *const bad[] = {"", "-1", "7.5", "0x10", "1e16", "1e999", "nan", " 1", "1 ", "e9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cli_parse_count(bad[i], GPUPROBE_MAX_PARAMS, &v), -1);
    assert_int_equal(cli_parse_count(NULL, 10, &v), -1);
    assert_true(v == 42); /* nothing written on failure */
    /* A limit that does not round-trip through double is still exact. */
    assert_int_equal(cli_parse_count("18446744073709551615", UINT64_MAX - 1, &v), -1);
}

static void parse_size(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t want;
    } good[] = {
        {"20GB", UINT64_C(20000000000)}, {"20GiB", UINT64_C(21474836480)},
        {"2e10", UINT64_C(20000000000)}, {"1.5gib", UINT64_C(1610612736)},
        {"512MiB", UINT64_C(536870912)}, {"7", 7}, {"7B", 7}, {"0", 0},
        {"12350000000", UINT64_C(12350000000)}, {"1kB", 1000}, {"1KiB", 1024},
        {"2e3MB", UINT64_C(2000000000)}, {"1TiB", UINT64_C(1099511627776)},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 1;
        if (cli_parse_size(good[i].text, UINT64_C(1) << 62, &v) != 0 || v != good[i].want)
            fail_msg("'%s': got %llu, expected %llu", good[i].text, (unsigned long long)v,
                     (unsigned long long)good[i].want);
    }
    static const char *const bad[] = {"", "GB", "20XB", "1.5B", "1e9.5", "-1GB", "20 GB", "20G",
                                      "0x10", "nan", "1e30", "2e", "e9", "20GB ", "1.0000001kB"};
    uint64_t v = 42;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_parse_size(bad[i], UINT64_C(1) << 62, &v) != -1)
            fail_msg("'%s' was taken", bad[i]);
    assert_int_equal(cli_parse_size(NULL, 10, &v), -1);
    assert_int_equal(cli_parse_size("11", 10, &v), -1);
    assert_true(v == 42); /* nothing written on failure */
}

static void echo_cuts_long_arguments(void **state)
{
    (void)state;
    char buf[CLI_ECHO_MAX + 4], arg[100];
    assert_string_equal(cli_echo(buf, sizeof buf, "--size"), "--size");
    memset(arg, 'a', sizeof arg);
    arg[CLI_ECHO_MAX] = '\0';
    assert_string_equal(cli_echo(buf, sizeof buf, arg), arg); /* 40 bytes: whole */
    arg[CLI_ECHO_MAX] = 'b';
    arg[CLI_ECHO_MAX + 1] = '\0';
    cli_echo(buf, sizeof buf, arg);
    assert_int_equal(strlen(buf), CLI_ECHO_MAX + 3);
    assert_string_equal(buf + CLI_ECHO_MAX, "...");
    /* Never inside a UTF-8 sequence: a 3-byte character across the cut
     * goes whole. */
    memset(arg, 'a', sizeof arg);
    memcpy(arg + CLI_ECHO_MAX - 1, "\xe2\x82\xac", 3);
    arg[60] = '\0';
    cli_echo(buf, sizeof buf, arg);
    assert_int_equal(strlen(buf), CLI_ECHO_MAX - 1 + 3);
    assert_string_equal(buf + CLI_ECHO_MAX - 1, "...");
}

static void parse_cc_and_workload(void **state)
{
    (void)state;
    int ma = -1, mi = -1;
    assert_int_equal(cli_parse_cc("8.6", &ma, &mi), 0);
    assert_int_equal(ma, 8);
    assert_int_equal(mi, 6);
    assert_int_equal(cli_parse_cc("9", &ma, &mi), 0);
    assert_int_equal(mi, 0);
    assert_int_equal(cli_parse_cc("9.", &ma, &mi), -1);
    assert_int_equal(cli_parse_cc("-1", &ma, &mi), -1);
    assert_int_equal(cli_parse_cc("8.6x", &ma, &mi), -1);
    gpuprobe_workload w;
    assert_int_equal(cli_parse_workload("training", &w), 0);
    assert_int_equal(w, GPUPROBE_WORKLOAD_TRAINING);
    assert_int_equal(cli_parse_workload("Training", &w), -1);
    assert_true(cli_have_rule(GPUPROBE_DTYPE_BF16, GPUPROBE_WORKLOAD_TRAINING));
    assert_false(cli_have_rule(GPUPROBE_DTYPE_INT8, GPUPROBE_WORKLOAD_TRAINING));
}

/* ---- the command line ---- */

enum { O_SIZE, O_FLAG, O_JSON, O_RANGE };
static const cli_option test_options[] = {
    [O_SIZE] = {"size", "N", "a size", 's'},
    [O_FLAG] = {"flag", NULL, "a flag", 'f'},
    [O_JSON] = {"json", NULL, "json", 0},
    [O_RANGE] = {"range", "[A..B]", "a value that may be left out", 0},
    {NULL, NULL, NULL, 0},
};
static const cli_command test_command = {
    .name = "test-cli", .summary = "Tests.", .options = test_options, .exit1 = "no"};

static void command_line_forms(void **state)
{
    (void)state;
    char *argv[] = {"test-cli", "--size=64", "--flag", "--size", "7", "--json", "--", NULL};
    int argc = 7;
    cli_start(&test_command, argc, argv);
    assert_int_equal(cli_json(), 1);
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    assert_int_equal(cli_next(&a, &v), O_SIZE);
    assert_string_equal(v, "64");
    assert_int_equal(cli_next(&a, &v), O_FLAG);
    assert_null(v);
    assert_int_equal(cli_next(&a, &v), O_SIZE);
    assert_string_equal(v, "7");
    /* --json is consumed by the parser; "--" ends the options. */
    assert_int_equal(cli_next(&a, &v), CLI_ARGS_END);
}

/* Short aliases: "-s VALUE", "-sVALUE", "-s=VALUE", a flag's "-f". */
static void command_line_letters(void **state)
{
    (void)state;
    char *argv[] = {"test-cli", "-s", "5", "-f", "-s6", "-s=7", "-s", "-f", NULL};
    int argc = 8;
    cli_start(&test_command, argc, argv);
    assert_int_equal(cli_json(), 0);
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v;
    assert_int_equal(cli_next(&a, &v), O_SIZE);
    assert_string_equal(v, "5");
    assert_int_equal(cli_next(&a, &v), O_FLAG);
    assert_null(v);
    assert_int_equal(cli_next(&a, &v), O_SIZE);
    assert_string_equal(v, "6");
    assert_int_equal(cli_next(&a, &v), O_SIZE);
    assert_string_equal(v, "7");
    assert_int_equal(cli_next(&a, &v), O_SIZE); /* "-f" is the value of -s */
    assert_string_equal(v, "-f");
    assert_int_equal(cli_next(&a, &v), CLI_ARGS_END);
}

static void command_line_errors(void **state)
{
    (void)state;
    static char *cases[][3] = {
        {"test-cli", "--bogus", NULL},  /* unknown */
        {"test-cli", "--size", NULL},   /* value missing */
        {"test-cli", "--flag=1", NULL}, /* flag with a value */
        {"test-cli", "operand", NULL},  /* operand */
        {"test-cli", "--siz", NULL},    /* no abbreviations */
        {"test-cli", "-x", NULL},       /* no such letter */
        {"test-cli", "-s", NULL},       /* its value missing */
        {"test-cli", "-f1", NULL},      /* a flag's letter with a value */
        {"test-cli", "-fs", NULL},      /* letters are not bundled */
        {"test-cli", "-", NULL},        /* an operand */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_start(&test_command, 2, cases[i]);
        cli_args a = CLI_ARGS_INIT(2, cases[i]);
        const char *v;
        assert_int_equal(cli_next(&a, &v), CLI_ARGS_EXIT);
        assert_int_equal(a.status, CLI_EXIT_USAGE);
    }
}

/* An option whose value may be left out takes "=VALUE", or the next
 * argument when that is not an option. */
static void command_line_optional_value(void **state)
{
    (void)state;
    char *argv[] = {"test-cli", "--range", "--range", "1..2", "--range=--x", "--range", "--json", "--range", NULL};
    int argc = 8;
    cli_start(&test_command, argc, argv);
    assert_int_equal(cli_json(), 1); /* not taken for --range's value */
    cli_args a = CLI_ARGS_INIT(argc, argv);
    const char *v = "unset";
    assert_int_equal(cli_next(&a, &v), O_RANGE);
    assert_null(v);
    assert_int_equal(cli_next(&a, &v), O_RANGE);
    assert_string_equal(v, "1..2");
    assert_int_equal(cli_next(&a, &v), O_RANGE);
    assert_string_equal(v, "--x");
    assert_int_equal(cli_next(&a, &v), O_RANGE);
    assert_null(v);
    assert_int_equal(cli_next(&a, &v), O_RANGE); /* the last argument */
    assert_null(v);
    assert_int_equal(cli_next(&a, &v), CLI_ARGS_END);
    /* A required value still takes the next argument, whatever it is. */
    char *argv2[] = {"test-cli", "--size", "-1", NULL};
    cli_start(&test_command, 3, argv2);
    cli_args b = CLI_ARGS_INIT(3, argv2);
    assert_int_equal(cli_next(&b, &v), O_SIZE);
    assert_string_equal(v, "-1");
}

static void parse_range(void **state)
{
    (void)state;
    uint64_t from = 0, to = 0;
    assert_int_equal(cli_parse_range("64..8192", 1u << 20, &from, &to), 0);
    assert_int_equal(from, 64);
    assert_int_equal(to, 8192);
    assert_int_equal(cli_parse_range("1e3..1e4", 1u << 20, &from, &to), 0);
    assert_int_equal(from, 1000);
    assert_int_equal(to, 10000);
    assert_int_equal(cli_parse_range("8..8", 8, &from, &to), 0);
    assert_int_equal(from, 8);
    static const char *bad[] = {"64", "..8", "8..", "9..8", "1.5..8", "64...100", "1..9", "a..b", "", "8..8..8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        from = to = 77;
        if (cli_parse_range(bad[i], 8, &from, &to) == 0)
            fail_msg("'%s' was taken", bad[i]);
        assert_int_equal(from, 77);
        assert_int_equal(to, 77);
    }
    assert_int_equal(cli_parse_range(NULL, 8, &from, &to), -1);
}

static void json_prescan_skips_option_values(void **state)
{
    (void)state;
    /* "--json" as the value of --size is a value, not the flag. */
    char *argv[] = {"test-cli", "--size", "--json", NULL};
    cli_start(&test_command, 3, argv);
    assert_int_equal(cli_json(), 0);
    char *argv3[] = {"test-cli", "-s", "--json", NULL};
    cli_start(&test_command, 3, argv3);
    assert_int_equal(cli_json(), 0);
    char *argv4[] = {"test-cli", "-s1", "--json", NULL};
    cli_start(&test_command, 3, argv4);
    assert_int_equal(cli_json(), 1);
    char *argv2[] = {"test-cli", "--", "--json", NULL};
    cli_start(&test_command, 3, argv2);
    assert_int_equal(cli_json(), 0);
}

static void human_figures(void **state)
{
    (void)state;
    char b[32];
    gp_format_bytes(b, sizeof b, 999);
    assert_string_equal(b, "999 B");
    gp_format_bytes(b, sizeof b, UINT64_C(25276059648));
    assert_string_equal(b, "25.3 GB");
    gp_format_count(b, sizeof b, UINT64_C(7000000000));
    assert_string_equal(b, "7.0 B");
    cli_mib(b, sizeof b, UINT64_C(150754820096));
    assert_string_equal(b, "143771MiB");
    cli_mib(b, sizeof b, (UINT64_C(1) << 20) - 1);
    assert_string_equal(b, "0MiB");
    gp_format_cuda_version(b, sizeof b, 12040);
    assert_string_equal(b, "12.4");
    gp_format_cuda_version(b, sizeof b, 0);
    assert_string_equal(b, "unknown");
    /* Durations: three significant digits, the unit that suits them. */
    static const struct {
        double s;
        const char *want;
    } t[] = {
        {1.807, "1.81 s"}, {27.718e-3, "27.7 ms"}, {0.511e-3, "511 \xc2\xb5s"},
        {5.5e-6, "5.50 \xc2\xb5s"}, {843e-9, "843 ns"}, {0.0009997, "1.00 ms"},
        {0.99996, "1.00 s"}, {12.3456, "12.3 s"}, {1234.5, "1234 s"}, {0, "0 s"},
        {-1, "0 s"}, {1e-12, "0.00 ns"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        cli_seconds(b, sizeof b, t[i].s);
        if (strcmp(b, t[i].want) != 0)
            fail_msg("%g s: got '%s', expected '%s'", t[i].s, b, t[i].want);
    }
}

/* Columns once quoted, and text fitted to them. */
static void fit_to_columns(void **state)
{
    (void)state;
    char b[128];
    assert_int_equal(cli_width("NVIDIA H200"), 11);
    assert_int_equal(cli_width("a\x1b[31m\\\n\xff\xc3\xa9"), 1 + 4 + 4 + 2 + 2 + 4 + 1);
    assert_string_equal(cli_fit(b, sizeof b, "NVIDIA H200", 14, 0), "NVIDIA H200   ");
    assert_string_equal(cli_fit(b, sizeof b, "NVIDIA H200", 14, 1), "   NVIDIA H200");
    assert_string_equal(cli_fit(b, sizeof b, "NVIDIA H200", 11, 0), "NVIDIA H200");
    assert_string_equal(cli_fit(b, sizeof b, "NVIDIA H200", 10, 0), "NVIDIA ...");
    /* Never inside an escape: the ESC (four columns) does not fit in what
     * is left, so the cut comes before it, and the rest is padding. */
    assert_string_equal(cli_fit(b, sizeof b, "ab\x1b" "cdefgh", 8, 0), "ab...   ");
    assert_int_equal(cli_width(cli_fit(b, sizeof b, "ab\x1b" "cdefgh", 8, 0)), 8);
    /* A character of two bytes is one column. */
    assert_string_equal(cli_fit(b, sizeof b, "caf\xc3\xa9", 5, 0), "caf\xc3\xa9 ");
    assert_string_equal(cli_fit(b, sizeof b, "abcdef", 2, 0), "  ");
    assert_string_equal(cli_fit(b, sizeof b, "", 3, 1), "   ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quote_plain_text_is_unchanged),
        cmocka_unit_test(quote_escapes_controls_and_backslash),
        cmocka_unit_test(quote_escapes_invalid_utf8),
        cmocka_unit_test(utf8_clean_replaces_each_bad_byte),
        cmocka_unit_test(json_strings_are_escaped_and_valid),
        cmocka_unit_test(json_numbers),
        cmocka_unit_test(json_b_reads_back),
        cmocka_unit_test(error_object_has_the_one_shape),
        cmocka_unit_test(parse_count),
        cmocka_unit_test(parse_size),
        cmocka_unit_test(echo_cuts_long_arguments),
        cmocka_unit_test(parse_cc_and_workload),
        cmocka_unit_test(command_line_forms),
        cmocka_unit_test(command_line_letters),
        cmocka_unit_test(command_line_errors),
        cmocka_unit_test(command_line_optional_value),
        cmocka_unit_test(parse_range),
        cmocka_unit_test(json_prescan_skips_option_values),
        cmocka_unit_test(human_figures),
        cmocka_unit_test(fit_to_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
