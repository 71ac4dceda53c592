/*
 * fuzz_plan.c - libFuzzer harness for the model description, the workload
 * options and the pure plan calls (gpuprobe_plan_compute(),
 * gpuprobe_plan_largest()).
 *
 * Each input is a list of 9-byte records: one key byte (bit 7: the
 * workload options, else the model; the rest, minus 8, the parameter, so
 * unknown and negative keys occur), then an int64 value (LE). Every record
 * is set; then the plan is computed and, when it succeeds, the largest
 * context and batch within its own total.
 *
 * Checked on every input, beyond "no crash, no sanitizer report":
 * - a set succeeds exactly when the key is known and the value within the
 *   queried bounds (0 always for the model), and a refused set changes
 *   nothing;
 * - the plan's status is one of those documented, and on failure nothing is
 *   written and the context has a message;
 * - on success the total is the sum of its parts, active <= params <= 10^15,
 *   training figures only in training, the KV cache only in inference;
 * - the largest context (batch) within the plan's own total is at least the
 *   options' context (batch), fits, and one more does not (unless at the
 *   bound): the search is exact.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "gpuprobe.h"

#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"

static int64_t rd64(const uint8_t *d)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)d[i] << (8 * i);
    return (int64_t)v;
}

static gpuprobe_status plan_at(gpuprobe_model *m, gpuprobe_plan_options *o,
                               gpuprobe_plan_param p, int64_t v, gpuprobe_plan *out)
{
    int64_t keep = 0;
    CHECK(gpuprobe_plan_options_get(o, p, &keep) == GPUPROBE_OK);
    CHECK(gpuprobe_plan_options_set(o, p, v) == GPUPROBE_OK);
    *out = (gpuprobe_plan)GPUPROBE_PLAN_INIT;
    gpuprobe_status st = gpuprobe_plan_compute(NULL, m, o, 0, out);
    CHECK(gpuprobe_plan_options_set(o, p, keep) == GPUPROBE_OK);
    return st;
}

/* The largest value of p within budget is exact. */
static void check_largest(gpuprobe_context *ctx, gpuprobe_model *m,
                          gpuprobe_plan_options *o, gpuprobe_plan_param p,
                          uint64_t budget)
{
    int64_t now = 0, lo = 0, hi = 0;
    uint64_t l = 0;
    CHECK(gpuprobe_plan_options_get(o, p, &now) == GPUPROBE_OK);
    CHECK(gpuprobe_plan_param_bounds(p, &lo, &hi) == GPUPROBE_OK);
    CHECK(gpuprobe_plan_largest(ctx, m, o, p, budget, &l) == GPUPROBE_OK);
    CHECK(l >= (uint64_t)now && l <= (uint64_t)hi);
    gpuprobe_plan at;
    if (l >= (uint64_t)lo) {
        CHECK(plan_at(m, o, p, (int64_t)l, &at) == GPUPROBE_OK);
        CHECK(at.total_bytes <= budget);
    }
    if (l < (uint64_t)hi) {
        gpuprobe_status st = plan_at(m, o, p, (int64_t)l + 1, &at);
        CHECK(st == GPUPROBE_ERR_OVERFLOW || (st == GPUPROBE_OK && at.total_bytes > budget));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpuprobe_model *m = NULL;
    gpuprobe_plan_options *o = NULL;
    gpuprobe_context *ctx = NULL;
    CHECK(gpuprobe_model_create(&m) == GPUPROBE_OK);
    CHECK(gpuprobe_plan_options_create(&o) == GPUPROBE_OK);
    CHECK(gpuprobe_context_create(&ctx, 0) == GPUPROBE_OK);

    for (size_t off = 0; off + 9 <= size && off < 9 * 64; off += 9) {
        int opts = data[off] & 0x80;
        int key = (data[off] & 0x7f) - 8;
        int64_t v = rd64(data + off + 1), lo = 0, hi = 0, before = 0, after = 0;
        gpuprobe_status bs, st;
        if (opts) {
            bs = gpuprobe_plan_param_bounds((gpuprobe_plan_param)key, &lo, &hi);
            gpuprobe_plan_options_get(o, (gpuprobe_plan_param)key, &before);
            st = gpuprobe_plan_options_set(o, (gpuprobe_plan_param)key, v);
            gpuprobe_plan_options_get(o, (gpuprobe_plan_param)key, &after);
        } else {
            bs = gpuprobe_model_param_bounds((gpuprobe_model_param)key, &lo, &hi);
            /* as set: the getter derives KV heads and head dimension */
            st = gpuprobe_model_set(m, (gpuprobe_model_param)key, v);
            if (bs == GPUPROBE_OK && key != GPUPROBE_MODEL_KV_HEADS &&
                key != GPUPROBE_MODEL_HEAD_DIM)
                gpuprobe_model_get(m, (gpuprobe_model_param)key, &after);
            else
                after = v;
            if (bs == GPUPROBE_OK && v == 0)
                lo = 0;
        }
        int ok = bs == GPUPROBE_OK && v >= lo && v <= hi;
        CHECK(st == (ok ? GPUPROBE_OK : GPUPROBE_ERR_INVALID_ARGUMENT));
        if (opts && bs == GPUPROBE_OK)
            CHECK(after == (ok ? v : before));
        if (!opts && ok)
            CHECK(after == v);
    }

    gpuprobe_plan p = GPUPROBE_PLAN_INIT;
    p.params = 12345;
    gpuprobe_status st = gpuprobe_plan_compute(ctx, m, o, 0, &p);
    CHECK(st == GPUPROBE_OK || st == GPUPROBE_ERR_INVALID_ARGUMENT ||
          st == GPUPROBE_ERR_UNSUPPORTED || st == GPUPROBE_ERR_OVERFLOW);
    if (st != GPUPROBE_OK) {
        CHECK(p.params == 12345);
        CHECK(gpuprobe_last_error(ctx)[0] != '\0');
    } else {
        int64_t wl = 0;
        gpuprobe_plan_options_get(o, GPUPROBE_PLAN_WORKLOAD, &wl);
        CHECK(p.total_bytes == p.weights_bytes + p.gradient_bytes + p.optimizer_bytes +
                                   p.kv_cache_bytes + p.activation_bytes +
                                   p.overhead_bytes + p.margin_bytes);
        CHECK(p.active_params <= p.params && p.params <= GPUPROBE_MAX_PARAMS);
        CHECK(p.params > 0 && p.weights_bytes > 0);
        if (wl != GPUPROBE_WORKLOAD_TRAINING)
            CHECK(p.gradient_bytes == 0 && p.optimizer_bytes == 0);
        if (wl != GPUPROBE_WORKLOAD_INFERENCE)
            CHECK(p.kv_cache_bytes == 0);
        CHECK(p.available_bytes == 0 && p.fits == 0);
        if (!(p.flags & GPUPROBE_PLAN_BY_PARAMS)) {
            check_largest(ctx, m, o, GPUPROBE_PLAN_CONTEXT, p.total_bytes);
            check_largest(ctx, m, o, GPUPROBE_PLAN_BATCH, p.total_bytes);
        }
    }
    gpuprobe_context_destroy(ctx);
    gpuprobe_plan_options_destroy(o);
    gpuprobe_model_destroy(m);
    return 0;
}
