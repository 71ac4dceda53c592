/*
 * test_params.c - the parameter table behind the three option objects
 * (lib/params.c): defaults, bounds at both edges, keys outside the table,
 * what "set" records, and the zero that a model takes as "not given". The
 * objects' own rules (N and K following M, a model's derived KV heads and
 * head dimension) are tested with them in test_matmul.c and test_plan.c.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"

enum { K_A, K_B, K_C, N_KEYS };
static const gp_param_info info[N_KEYS] = {
    [K_A] = {1, 10, 5},
    [K_B] = {-3, 3, -1},
    [K_C] = {INT64_MIN, INT64_MAX, INT64_MAX},
};
static const gp_param_table table = {info, N_KEYS, 0};
static const gp_param_table zero_table = {info, N_KEYS, 1};

/* An object of the public kind: a struct whose first member is the table. */
typedef struct object {
    gp_params p;
} object;

static void test_defaults_and_bounds(void **state)
{
    (void)state;
    object *o = gp_params_new(sizeof *o, &table);
    assert_non_null(o);
    int64_t v = 0, lo = 0, hi = 0;
    assert_int_equal(gp_params_get(&o->p, K_A, &v), GPUPROBE_OK);
    assert_int_equal(v, 5);
    assert_int_equal(gp_params_get(&o->p, K_B, &v), GPUPROBE_OK);
    assert_int_equal(v, -1);
    assert_int_equal(gp_params_get(&o->p, K_C, &v), GPUPROBE_OK);
    assert_true(v == INT64_MAX);
    assert_int_equal(gp_params_bounds(&table, K_B, &lo, &hi), GPUPROBE_OK);
    assert_int_equal(lo, -3);
    assert_int_equal(hi, 3);

    /* Both edges taken, one past either refused with nothing changed. */
    assert_int_equal(gp_params_set(&o->p, K_A, 1), GPUPROBE_OK);
    assert_int_equal(gp_params_set(&o->p, K_A, 10), GPUPROBE_OK);
    assert_int_equal(gp_params_set(&o->p, K_A, 0), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_set(&o->p, K_A, 11), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_get(&o->p, K_A, &v), GPUPROBE_OK);
    assert_int_equal(v, 10);
    assert_int_equal(gp_params_set(&o->p, K_C, INT64_MIN), GPUPROBE_OK);
    assert_int_equal(gp_params_get(&o->p, K_C, &v), GPUPROBE_OK);
    assert_true(v == INT64_MIN);
    gp_params_destroy(o);
    gp_params_destroy(NULL);
}

static void test_unknown_keys_and_null(void **state)
{
    (void)state;
    gp_params ps;
    gp_params_init(&ps, &table);
    int64_t v = 77, lo = 77, hi = 77;
    for (int key = -1; key <= N_KEYS; key += N_KEYS + 1) {
        assert_int_equal(gp_params_get(&ps, key, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(gp_params_set(&ps, key, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(gp_params_bounds(&table, key, &lo, &hi), GPUPROBE_ERR_INVALID_ARGUMENT);
        assert_int_equal(gp_params_is_set(&ps, key), 0);
    }
    assert_int_equal(v, 77);
    assert_int_equal(lo, 77);
    assert_int_equal(hi, 77);
    assert_int_equal(gp_params_get(NULL, K_A, &v), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_get(&ps, K_A, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_set(NULL, K_A, 1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_bounds(&table, K_A, NULL, &hi), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_bounds(&table, K_A, &lo, NULL), GPUPROBE_ERR_INVALID_ARGUMENT);
    /* Keys past the table read as 0, never as another table's values. */
    assert_int_equal(ps.v[N_KEYS], 0);
    assert_int_equal(ps.v[GP_PARAMS_MAX - 1], 0);
}

/* "Set" is per key, also when set to the default; a refused value does
 * not count. */
static void test_set_bits(void **state)
{
    (void)state;
    gp_params ps;
    gp_params_init(&ps, &table);
    assert_int_equal(gp_params_is_set(&ps, K_A), 0);
    assert_int_equal(gp_params_set(&ps, K_B, -1), GPUPROBE_OK); /* the default */
    assert_int_equal(gp_params_is_set(&ps, K_B), 1);
    assert_int_equal(gp_params_is_set(&ps, K_A), 0);
    assert_int_equal(gp_params_is_set(&ps, K_C), 0);
    assert_int_equal(gp_params_set(&ps, K_A, 99), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_is_set(&ps, K_A), 0);
    assert_int_equal(gp_params_set(&ps, K_C, 0), GPUPROBE_OK);
    assert_int_equal(gp_params_is_set(&ps, K_C), 1);
}

/* A table whose zero means "not given" takes 0 outside the bounds, and
 * only 0. */
static void test_zero_unsets(void **state)
{
    (void)state;
    gp_params ps;
    gp_params_init(&ps, &zero_table);
    int64_t v = -5;
    assert_int_equal(gp_params_set(&ps, K_A, 7), GPUPROBE_OK);
    assert_int_equal(gp_params_set(&ps, K_A, 0), GPUPROBE_OK);
    assert_int_equal(gp_params_get(&ps, K_A, &v), GPUPROBE_OK);
    assert_int_equal(v, 0);
    assert_int_equal(gp_params_set(&ps, K_A, -1), GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_int_equal(gp_params_set(&ps, K_A, 11), GPUPROBE_ERR_INVALID_ARGUMENT);
    /* Without the flag, 0 below the bounds is refused (above). */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_bounds),
        cmocka_unit_test(test_unknown_keys_and_null),
        cmocka_unit_test(test_set_bits),
        cmocka_unit_test(test_zero_unsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
