/*
 * params.c - the parameter table behind the public API's three option
 * objects (gpuprobe_matmul_options, gpuprobe_plan_options, gpuprobe_model):
 * integer values by key, each within its bounds, starting at its default,
 * and whether the caller set it. Each object's own file holds its table
 * and what its getter derives from other keys. Ground floor: pure, calls
 * nothing of the library. See docs/architecture.md.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "internal.h"

#include <stdlib.h>

void gp_params_init(gp_params *ps, const gp_param_table *t)
{
    ps->table = t;
    ps->set = 0;
    for (unsigned k = 0; k < GP_PARAMS_MAX; k++)
        ps->v[k] = k < t->count ? t->info[k].def : 0;
}

void *gp_params_new(size_t size, const gp_param_table *t)
{
    void *obj = malloc(size);
    if (obj)
        gp_params_init(obj, t);
    return obj;
}

void gp_params_destroy(void *obj)
{
    free(obj);
}

static int known(const gp_param_table *t, int key)
{
    return key >= 0 && (unsigned)key < t->count;
}

gpuprobe_status gp_params_bounds(const gp_param_table *t, int key, int64_t *lower,
                                 int64_t *upper)
{
    if (!known(t, key) || !lower || !upper)
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *lower = t->info[key].lower;
    *upper = t->info[key].upper;
    return GPUPROBE_OK;
}

gpuprobe_status gp_params_set(gp_params *ps, int key, int64_t value)
{
    if (!ps || !known(ps->table, key))
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    const gp_param_info *in = &ps->table->info[key];
    int unset = ps->table->zero_unsets && value == 0;
    if (!unset && (value < in->lower || value > in->upper))
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    ps->v[key] = value;
    ps->set |= UINT32_C(1) << key;
    return GPUPROBE_OK;
}

gpuprobe_status gp_params_get(const gp_params *ps, int key, int64_t *value)
{
    if (!ps || !value || !known(ps->table, key))
        return GPUPROBE_ERR_INVALID_ARGUMENT;
    *value = ps->v[key];
    return GPUPROBE_OK;
}

int gp_params_is_set(const gp_params *ps, int key)
{
    return known(ps->table, key) && (ps->set >> key & 1u);
}
